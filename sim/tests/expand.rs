//! The trace expander: exact streams for small hand-made traces, and the
//! published traces' working sets against the trace reader's summary.
use std::io::{BufReader, Cursor};
use std::path::{Path, PathBuf};

use sim::expand::{self, expand_kernel, Arg, ExpandConfig, Instr, Item};
use sim::trace::{self, Rw, TraceReader};

fn traces_dir() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

fn cfg(warps: usize, cap: u64, sms: u64) -> ExpandConfig {
    ExpandConfig { step: 128, alu: 2, warps, cap, sms }
}

fn arg(id: u64, offset: u64, length: u64, rw: Rw) -> Arg {
    Arg { id, offset, length, rw }
}

#[test]
fn one_argument_is_dealt_to_warps_round_robin() {
    // 1000 bytes = 8 steps of 128; two warps get steps 0,2,4,6 and 1,3,5,7.
    let k = expand_kernel("op", vec![arg(0, 0, 1000, Rw::R)], &cfg(2, 100, 1));
    assert_eq!(k.warps.len(), 2);
    assert_eq!(k.full_steps, 8);
    for (w, s) in k.warps.iter().enumerate() {
        let mut want = vec![Instr::LoadMeta { arg: 0 }];
        for j in 0..4u64 {
            let off = (2 * j + w as u64) * 128;
            want.push(Instr::MemCheck { arg: 0, off, width: 4 });
            want.push(Instr::Load { arg: 0, off });
            want.push(Instr::Alu(2));
        }
        assert_eq!(s, &want, "warp {w}");
    }
}

#[test]
fn arguments_interleave_and_rw_checks_both_accesses() {
    // Warp 0 of 1: step 0 of a (r), step 0 of b (rw), step 1 of a; b has one step.
    let k = expand_kernel("op", vec![arg(3, 256, 200, Rw::R), arg(5, 0, 64, Rw::RW)], &cfg(1, 100, 1));
    assert_eq!(k.working_set, 2);
    assert_eq!(
        k.warps,
        vec![vec![
            Instr::LoadMeta { arg: 0 },
            Instr::LoadMeta { arg: 1 },
            Instr::MemCheck { arg: 0, off: 256, width: 4 },
            Instr::Load { arg: 0, off: 256 },
            Instr::Alu(2),
            Instr::MemCheck { arg: 1, off: 0, width: 4 },
            Instr::Load { arg: 1, off: 0 },
            Instr::Alu(2),
            Instr::MemCheck { arg: 1, off: 0, width: 4 },
            Instr::Store { arg: 1, off: 0 },
            Instr::Alu(2),
            // 72 bytes remain at offset 384: a full thread width.
            Instr::MemCheck { arg: 0, off: 384, width: 4 },
            Instr::Load { arg: 0, off: 384 },
            Instr::Alu(2),
        ]]
    );
}

#[test]
fn a_short_last_step_narrows_the_check() {
    for (len, width) in [(130, 2u8), (129, 1), (131, 2), (132, 4)] {
        let k = expand_kernel("op", vec![arg(0, 0, len, Rw::W)], &cfg(1, 100, 1));
        assert_eq!(k.warps[0][4], Instr::MemCheck { arg: 0, off: 128, width }, "length {len}");
        assert_eq!(k.warps[0][5], Instr::Store { arg: 0, off: 128 });
    }
    // 32-byte steps: thread width 1.
    let c = ExpandConfig { step: 32, ..cfg(1, 100, 1) };
    let k = expand_kernel("op", vec![arg(0, 0, 64, Rw::R)], &c);
    assert_eq!(k.warps[0][1], Instr::MemCheck { arg: 0, off: 0, width: 1 });
    assert_eq!(k.warps[0][4], Instr::MemCheck { arg: 0, off: 32, width: 1 });
}

#[test]
fn one_sm_share_and_cap_spread_over_the_range() {
    // 1000 steps over 132 SMs: this SM does ceil(1000/132) = 8, spread evenly.
    let k = expand_kernel("op", vec![arg(0, 0, 128_000, Rw::R)], &cfg(1, 100, 132));
    let offs: Vec<u64> = k.warps[0]
        .iter()
        .filter_map(|i| if let Instr::Load { off, .. } = i { Some(*off) } else { None })
        .collect();
    assert_eq!(offs, (0..8u64).map(|j| j * 1000 / 8 * 128).collect::<Vec<_>>());
    assert_eq!(k.full_steps, 8);
    // The cap keeps 16 of 10000 steps, still spread over the whole range.
    let k = expand_kernel("op", vec![arg(0, 0, 1_280_000, Rw::R)], &cfg(4, 16, 1));
    let loads = k.warps.iter().flatten().filter(|i| matches!(i, Instr::Load { .. })).count();
    assert_eq!(loads, 16);
    assert_eq!(k.full_steps, 10000);
    assert_eq!(k.warps[3][k.warps[3].len() - 2], Instr::Load { arg: 0, off: 15 * 10000 / 16 * 128 });
    // A tiny argument still gives one step (and its LOADMETA) to this SM.
    let k = expand_kernel("op", vec![arg(0, 0, 4, Rw::R)], &cfg(32, 256, 132));
    assert_eq!(k.warps.len(), 1);
    // A zero-length range is no work: no warp is launched.
    let k = expand_kernel("op", vec![arg(0, 0, 0, Rw::R)], &cfg(32, 256, 132));
    assert!(k.warps.is_empty());
}

fn reader(text: &str) -> TraceReader<BufReader<Cursor<Vec<u8>>>> {
    TraceReader::new(BufReader::new(Cursor::new(text.as_bytes().to_vec())), "mem.jsonl").unwrap()
}

const HEADER: &str = r#"{"format":"gpuarmor-trace","version":1,"workload":"tiny"}"#;

#[test]
fn items_keep_trace_order_and_lines() {
    let text = format!(
        "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
        r#"{"t":"seg_alloc","base":4096,"size":8192}"#,
        r#"{"t":"alloc","id":0,"base":4096,"size":512}"#,
        r#"{"t":"kernel","op":"fill","acc":[[0,0,512,"w"]]}"#,
        r#"{"t":"free","id":0}"#,
        r#"{"t":"seg_free","base":4096,"size":8192}"#
    );
    let wl = expand::expand_reader(reader(&text), "mem.jsonl".into(), &cfg(2, 8, 1)).unwrap();
    assert_eq!(wl.workload, "tiny");
    assert_eq!(wl.items.len(), 3);
    assert!(matches!(wl.items[0], Item::Alloc { id: 0, base: 4096, size: 512, line: 3 }));
    assert!(matches!(&wl.items[1], Item::Kernel { line: 4, kernel } if kernel.op == "fill" && kernel.warps.len() == 2));
    assert!(matches!(wl.items[2], Item::Free { id: 0, line: 5 }));
}

#[test]
fn malformed_trace_fails_with_its_line() {
    let text = format!("{HEADER}\n{}\n{}\n", r#"{"t":"alloc","id":0,"base":4096,"size":512}"#, r#"{"t":"kernel","op":"x","acc":[[0,0,"ten","r"]]}"#);
    let e = expand::expand_reader(reader(&text), "mem.jsonl".into(), &cfg(2, 8, 1)).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("mem.jsonl", 3), "{e}");
    let e = expand::expand_reader(reader(HEADER), "mem.jsonl".into(), &ExpandConfig { step: 64, ..cfg(2, 8, 1) })
        .unwrap_err();
    assert!(e.to_string().contains("step"), "{e}");
}

#[test]
fn published_traces_working_sets_match_the_reader() {
    let files = ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"];
    let mut overall = 0;
    for f in files {
        let path = traces_dir().join(format!("{f}.jsonl.gz"));
        let wl = expand::load(&path, &ExpandConfig::default()).unwrap_or_else(|e| panic!("{e}"));
        let sum = trace::summarize(&path).unwrap();
        assert_eq!(wl.workload, f);
        assert_eq!(wl.null_accesses, 0);
        assert_eq!(wl.kernels().count() as u64, sum.kernels);
        let mut hist = std::collections::BTreeMap::new();
        for k in wl.kernels() {
            *hist.entry(k.working_set as u64).or_insert(0u64) += 1;
        }
        assert_eq!(hist, sum.working_set_histogram, "{f}");
        let max = wl.kernels().map(|k| k.working_set).max().unwrap();
        // traces/README.md: inference <= 6 blocks per operator, training 76..322.
        if f.ends_with("infer") {
            assert!(max <= 6, "{f}: {max}");
        } else {
            assert!((76..=322).contains(&max), "{f}: {max}");
        }
        overall = overall.max(max);
    }
    assert_eq!(overall, 322);
}
