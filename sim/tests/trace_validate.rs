//! The trace validity rules, each against a small gzip'd trace
//! written at test time: the reader rejects it with the line and what is
//! wrong, and `mlugen trace` (`sim::trace::summarize`) and the sweep's
//! expansion (`sim::expand::load`, what the RTL SM pipeline tests read) reject
//! it with exactly the same error. The valid boundary values are accepted by
//! all three.
use std::io::Write;
use std::path::PathBuf;

use flate2::write::GzEncoder;
use flate2::Compression;
use sim::expand::{self, ExpandConfig, Item};
use sim::trace::{self, TraceError, TraceReader, ADDR_END};

/// A gzip'd trace in the system temp dir, removed on drop.
struct Scratch(PathBuf);
impl Scratch {
    fn gz(tag: &str, lines: &[String]) -> Scratch {
        let p = std::env::temp_dir().join(format!("mlugen-trace-validate-{}-{tag}.jsonl.gz", std::process::id()));
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        for l in lines {
            writeln!(e, "{l}").unwrap();
        }
        std::fs::write(&p, e.finish().unwrap()).unwrap();
        Scratch(p)
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const HEADER: &str = r#"{"format": "gpuarmor-trace", "version": 1, "workload": "t"}"#;

fn alloc(id: u64, base: u64, size: u64) -> String {
    format!(r#"{{"t": "alloc", "id": {id}, "base": {base}, "size": {size}}}"#)
}
fn free(id: u64) -> String {
    format!(r#"{{"t": "free", "id": {id}}}"#)
}
fn seg(t: &str, base: u64, size: u64) -> String {
    format!(r#"{{"t": "{t}", "base": {base}, "size": {size}}}"#)
}
/// A kernel with accesses `(id, offset, length)` (`None`: a null id), all reads.
fn kernel(acc: &[(Option<u64>, u64, u64)]) -> String {
    let acc: Vec<String> = acc
        .iter()
        .map(|(id, o, l)| {
            let id = id.map_or("null".to_string(), |i| i.to_string());
            format!(r#"[{id}, {o}, {l}, "r"]"#)
        })
        .collect();
    format!(r#"{{"t": "kernel", "op": "x", "acc": [{}]}}"#, acc.join(", "))
}

/// The whole trace through the reader, `summarize` and the sweep's
/// expansion: `Ok(events)` if all three accept it, the error if all three
/// reject it with the same error (file, line, message); a panic otherwise.
fn read_all(tag: &str, events: &[String]) -> Result<u64, TraceError> {
    let mut lines = vec![HEADER.to_string()];
    lines.extend(events.iter().cloned());
    let s = Scratch::gz(tag, &lines);
    let by_reader = TraceReader::open(&s.0).and_then(|r| r.collect::<Result<Vec<_>, _>>()).map(|v| v.len() as u64);
    let by_trace = trace::summarize(&s.0).map(|sum| sum.events);
    let by_sweep = expand::load(&s.0, &ExpandConfig::default()).map(|wl| wl.items.len() as u64);
    match (&by_reader, &by_trace, &by_sweep) {
        (Ok(n), Ok(m), Ok(_)) => assert_eq!(n, m, "{tag}"),
        (Err(a), Err(b), Err(c)) => {
            assert_eq!(a, b, "{tag}: mlugen trace and the reader disagree");
            assert_eq!(a, c, "{tag}: the sweep's expansion and the reader disagree");
            assert_eq!(a.file, s.0.display().to_string(), "{tag}");
        }
        _ => panic!("{tag}: reader {by_reader:?}, trace {by_trace:?}, sweep {by_sweep:?}"),
    }
    by_reader
}

/// Asserts that the trace is rejected at `line` with a message containing `want`.
fn rejects(tag: &str, events: &[String], line: u64, want: &str) {
    let e = read_all(tag, events).err().unwrap_or_else(|| panic!("{tag}: accepted"));
    assert_eq!(e.line, line, "{tag}: {e}");
    assert!(e.message.contains(want), "{tag}: got {:?}, want {want:?}", e.message);
    assert!(e.to_string().contains(&format!(".jsonl.gz:{line}: ")), "{tag}: {e}");
}

const B: u64 = 0x7f00_0000_0000;

#[test]
fn block_of_size_zero_is_rejected() {
    rejects("size0", &[seg("seg_alloc", B, 4096), alloc(0, B, 0)], 3, "alloc: id 0: size 0");
}

#[test]
fn block_too_large_for_56_bits_is_rejected() {
    rejects("size2^63", &[alloc(0, 4096, 1 << 63)], 2, "alloc: id 0: size 9223372036854775808 does not fit 56 bits");
    rejects("size2^56", &[alloc(0, 0, ADDR_END)], 2, "alloc: id 0: size 72057594037927936 does not fit 56 bits");
    rejects("sizemax", &[alloc(3, 0, u64::MAX)], 2, "alloc: id 3: size 18446744073709551615 does not fit 56 bits");
}

#[test]
fn base_above_56_bits_is_rejected() {
    rejects(
        "base2^56",
        &[alloc(0, B, 64), alloc(1, ADDR_END, 64)],
        3,
        "alloc: id 1: base 0x100000000000000 is not a 56-bit address",
    );
    // A tagged pointer is not a base.
    rejects("tagged", &[alloc(0, (0x5a << 56) | B, 64)], 2, "alloc: id 0: base 0x5a007f0000000000 is not a 56-bit address");
}

#[test]
fn block_ending_past_56_bits_is_rejected() {
    rejects(
        "end",
        &[alloc(0, ADDR_END - 4096, 4097)],
        2,
        "alloc: id 0: [0xfffffffffff000, 0x100000000000001) ends past the 56-bit address space",
    );
}

#[test]
fn overlapping_live_blocks_are_rejected() {
    // The new block starts inside a live one.
    rejects(
        "overlap-tail",
        &[alloc(0, B, 512), alloc(1, B + 256, 512)],
        3,
        "alloc: id 1: block [0x7f0000000100, 0x7f0000000300) overlaps live block 0 at [0x7f0000000000, 0x7f0000000200)",
    );
    // The new block starts below a live one and reaches into it.
    rejects("overlap-head", &[alloc(0, B + 512, 512), alloc(1, B, 513)], 3, "overlaps live block 0");
    // The new block contains a live one; a disjoint block in between is not the one named.
    rejects(
        "overlap-contains",
        &[alloc(0, B, 64), alloc(1, B + 1024, 64), alloc(2, B + 4096, 64), alloc(3, B + 512, 1024)],
        5,
        "alloc: id 3: block [0x7f0000000200, 0x7f0000000600) overlaps live block 1",
    );
    // The same base twice.
    rejects("overlap-same", &[alloc(0, B, 64), kernel(&[(Some(0), 0, 64)]), alloc(1, B, 64)], 4, "overlaps live block 0");
    // Freeing the first block does not free the other.
    rejects(
        "overlap-after-free",
        &[alloc(0, B, 64), alloc(1, B + 64, 64), free(0), alloc(2, B + 32, 64)],
        5,
        "overlaps live block 1",
    );
}

#[test]
fn access_past_the_block_end_is_rejected() {
    rejects(
        "past-end",
        &[alloc(0, B, 512), kernel(&[(Some(0), 0, 512), (Some(0), 500, 13)])],
        3,
        "kernel: acc[1]: range [500, 513) of block 0 ends past the block's end (size 512)",
    );
    rejects("past-end-empty", &[alloc(0, B, 512), kernel(&[(Some(0), 513, 0)])], 3, "kernel: acc[0]: range [513, 513)");
    // The size is that of the block live now, not of an earlier block with the id.
    rejects(
        "past-end-reused-id",
        &[alloc(0, B, 4096), free(0), alloc(0, B, 64), kernel(&[(Some(0), 0, 128)])],
        5,
        "range [0, 128) of block 0 ends past the block's end (size 64)",
    );
}

#[test]
fn offset_plus_length_overflowing_64_bits_is_rejected() {
    let max = u64::MAX;
    rejects(
        "overflow",
        &[alloc(0, B, 512), kernel(&[(Some(0), max, 1)])],
        3,
        "kernel: acc[0]: offset 18446744073709551615 + length 1 overflows 64 bits",
    );
    rejects("overflow-len", &[alloc(0, B, 512), kernel(&[(Some(0), 1, max)])], 3, "offset 1 + length 18446744073709551615 overflows");
    // Also for an access no live block holds.
    rejects("overflow-null", &[kernel(&[(None, 1 << 63, 1 << 63)])], 2, "kernel: acc[0]: offset 9223372036854775808 + length");
}

#[test]
fn segments_get_the_same_range_checks() {
    rejects("seg-size0", &[seg("seg_alloc", B, 0)], 2, "seg_alloc: size 0");
    rejects("seg-size", &[seg("seg_alloc", 0, 1 << 63)], 2, "seg_alloc: size 9223372036854775808 does not fit 56 bits");
    rejects("seg-base", &[seg("seg_free", ADDR_END, 4096)], 2, "seg_free: base 0x100000000000000 is not a 56-bit address");
    rejects("seg-end", &[seg("seg_alloc", B, 2 << 20), seg("seg_free", ADDR_END - 1, 2)], 3, "seg_free: [0xffffffffffffff, 0x100000000000001) ends past");
}

#[test]
fn boundary_values_are_accepted() {
    let events = [
        seg("seg_alloc", B, 2 << 20),
        // Size 1, and a block right after it (adjacent is not overlapping).
        alloc(0, B, 1),
        alloc(1, B + 1, 511),
        // An access ending exactly at the block end, a whole block, and a
        // zero-length range at the end.
        kernel(&[(Some(0), 0, 1), (Some(1), 500, 11), (Some(1), 0, 511), (Some(1), 511, 0)]),
        // The last byte of the address space: base + size == 2^56.
        alloc(2, ADDR_END - 512, 512),
        kernel(&[(Some(2), 0, 512), (Some(2), 511, 1)]),
        // The largest size (2^56 - 1) ending at 2^56 needs a free space: free 0 and 1 first.
        free(0),
        free(1),
        free(2),
        alloc(3, 1, ADDR_END - 1),
        kernel(&[(Some(3), ADDR_END - 2, 1)]),
        free(3),
        // A freed block's range can be reused, with the same id.
        alloc(0, B, 4096),
        kernel(&[(Some(0), 4095, 1), (None, u64::MAX, 0)]),
        // Segments at the boundaries.
        seg("seg_alloc", ADDR_END - 4096, 4096),
        seg("seg_free", 0, 1),
    ];
    assert_eq!(read_all("boundaries", &events), Ok(events.len() as u64));
    // The sweep keeps the blocks as given.
    let mut lines = vec![HEADER.to_string()];
    lines.extend(events.iter().cloned());
    let s = Scratch::gz("boundaries-items", &lines);
    let wl = expand::load(&s.0, &ExpandConfig::default()).unwrap();
    let allocs: Vec<(u64, u64, u64)> = wl
        .items
        .iter()
        .filter_map(|i| if let Item::Alloc { id, base, size, .. } = i { Some((*id, *base, *size)) } else { None })
        .collect();
    assert_eq!(allocs, vec![(0, B, 1), (1, B + 1, 511), (2, ADDR_END - 512, 512), (3, 1, ADDR_END - 1), (0, B, 4096)]);
}

/// The overlap check only keeps live blocks: a long trace of blocks that
/// are allocated and freed in turn is read with a small live set.
#[test]
fn the_overlap_check_forgets_freed_blocks() {
    let mut events = Vec::new();
    for i in 0..20_000u64 {
        // Every block reuses one of four slots.
        events.push(alloc(i, B + (i % 4) * 4096, 4096));
        if i >= 3 {
            events.push(free(i - 3));
        }
    }
    let mut lines = vec![HEADER.to_string()];
    lines.extend(events.iter().cloned());
    let s = Scratch::gz("churn", &lines);
    let mut r = TraceReader::open(&s.0).unwrap();
    let mut max_live = 0;
    while let Some(ev) = r.next() {
        ev.unwrap();
        max_live = max_live.max(r.live_blocks());
    }
    assert_eq!(max_live, 4);
    assert_eq!(r.line(), 1 + events.len() as u64);
}

/// The four published traces pass every rule (reader, `mlugen trace` and the
/// sweep's expansion); run with `--nocapture` for the reader's time per file.
#[test]
fn published_traces_pass_every_rule() {
    let dir = match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    };
    for f in ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"] {
        let path = dir.join(format!("{f}.jsonl.gz"));
        let t = std::time::Instant::now();
        let mut r = TraceReader::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let (mut events, mut max_live) = (0u64, 0usize);
        while let Some(ev) = r.next() {
            ev.unwrap_or_else(|e| panic!("{e}"));
            events += 1;
            max_live = max_live.max(r.live_blocks());
        }
        let took = t.elapsed();
        eprintln!("{f}: {events} events, max {max_live} live blocks, validated in {:.1} ms", took.as_secs_f64() * 1e3);
        assert_eq!(trace::summarize(&path).map(|s| s.events), Ok(events));
        expand::load(&path, &ExpandConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    }
}
