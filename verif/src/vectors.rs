//! The vector files of the standalone Verilog testbenches,
//! `verilog_out/tb/<top>.vec` (format and testbench: hw::tb), recorded by
//! `mlugen vectors`.
//!
//! Where the expected outputs come from, per kind of top:
//! - MLB (one- and two-stage): the golden model `sim::mlb::Mlb::cycle`
//!   alone, through the cosimulation's random stimulus
//!   (harness::mlb::MlbBench): every output the model defines in a cycle is
//!   expected, the rest (a hit's data while there is no hit) is `x`. The
//!   two-stage MLB answers searches one cycle later, so its search outputs
//!   are the model's shifted by one cycle, and a search whose hit entry the
//!   same cycle's fill replaced is expected as a miss (hw/src/mlb.rs, hit
//!   latency 2).
//! - MEMCHECK (combinational): `sim::memcheck` for every output, on edge and
//!   random vectors.
//! - Canary unit (closed loop: a memory answers the unit): a program run on
//!   the Verilog under Verilator (`crate::recorder::Recorder`) with every response compared
//!   with the canary model replay while recording; the expected outputs are
//!   the outputs of that run, every port, every cycle after the first.
//! - MLU unit: its cycle-accurate model `sim::mlu_unit::MluUnit` alone
//!   (verif::unit_driver::record_vectors): random requests, the
//!   metadata port answering the model's reads; every output the model
//!   defines, every cycle.
use crate::energy_workload::{CanaryRec, MEMORY_LATENCY};
use crate::harness::mlb::{MlbBench, MlbExpect, MlbPorts};
use sim::runtime::SplitMix64;
use crate::recorder::read;
use crate::verilator::{Layout, Top};
use anyhow::{anyhow, ensure, Result};
use hw::manifest::Manifest;
use sim::config::Replacement;
use sim::top::TopKind;
use synth::activity::Stimulus;

/// One top's vectors: per cycle every input's value and every output's
/// expected value (`None`: not compared), in manifest port order.
#[derive(Clone, Debug)]
pub struct Vectors {
    pub top: String,
    /// Comment lines at the head of the file (what the run was, where the
    /// expectations come from).
    pub about: Vec<String>,
    pub inputs: Vec<(String, usize)>,
    pub outputs: Vec<(String, usize)>,
    pub rows: Vec<(Vec<u128>, Vec<Option<u128>>)>,
}

impl Vectors {
    pub fn new(m: &Manifest, about: &[&str]) -> Vectors {
        let ports = |dir: &str| m.ports.iter().filter(|p| p.direction == dir && p.name != "clock").map(|p| (p.name.clone(), p.width)).collect();
        Vectors { top: m.top.clone(), about: about.iter().map(|s| s.to_string()).collect(), inputs: ports("input"), outputs: ports("output"), rows: vec![] }
    }

    /// Append a recorded stimulus (inputs given as changes from all-zero at
    /// its first cycle; expected outputs where it has them).
    pub fn push_stimulus(&mut self, st: &Stimulus) -> Result<()> {
        let mut cur = vec![0u128; self.inputs.len()];
        for (c, changes) in st.cycles.iter().enumerate() {
            for (name, v) in changes {
                let i = self.inputs.iter().position(|p| &p.0 == name).ok_or_else(|| anyhow!("{}: the recording drives `{name}`, not an input", self.top))?;
                cur[i] = *v;
            }
            let mut out = vec![None; self.outputs.len()];
            for (name, v) in st.expect.get(c).map(|e| e.as_slice()).unwrap_or_default() {
                let i = self.outputs.iter().position(|p| &p.0 == name).ok_or_else(|| anyhow!("{}: the recording expects `{name}`, not an output", self.top))?;
                out[i] = Some(*v);
            }
            self.rows.push((cur.clone(), out));
        }
        Ok(())
    }

    /// Outputs compared over all rows (a run that compares nothing is an error).
    pub fn checks(&self) -> usize {
        self.rows.iter().map(|r| r.1.iter().filter(|o| o.is_some()).count()).sum()
    }

    /// The file text (hw::tb's format).
    pub fn text(&self) -> String {
        let hex = |v: u128, w: usize| format!("{v:0width$x}", width = w.div_ceil(4));
        let mut s = format!("# tb/{}.vec: vectors of tb/{}_tb.v, recorded by `mlugen vectors` (do not edit).\n", self.top, self.top);
        for a in &self.about {
            // Lines of at most 100 characters (the testbench reads up to hw::tb::COMMENT_CHARS).
            let mut line = String::from("#");
            for w in a.split_whitespace() {
                if line.len() + 1 + w.len() > 100 && line.len() > 1 {
                    s += &line;
                    s += "\n";
                    line = String::from("#  ");
                }
                line.push(' ');
                line += w;
            }
            s += &line;
            s += "\n";
        }
        s += &format!("# {} cycles; per line the inputs then the expected outputs (x: not compared):\n", self.rows.len());
        s += &format!("#   inputs:  {}\n", self.inputs.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(" "));
        s += &format!("#   outputs: {}\n", self.outputs.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(" "));
        for (ins, outs) in &self.rows {
            // A row that does not fill every port is a generator bug (the
            // testbench would reject the file): never truncate it silently.
            assert!(
                ins.len() == self.inputs.len() && outs.len() == self.outputs.len(),
                "{}: a row of {} inputs and {} outputs for {} and {} ports",
                self.top,
                ins.len(),
                outs.len(),
                self.inputs.len(),
                self.outputs.len()
            );
            let mut f: Vec<String> = ins.iter().zip(&self.inputs).map(|(v, p)| hex(*v, p.1)).collect();
            f.extend(outs.iter().zip(&self.outputs).map(|(v, p)| v.map_or("x".to_string(), |v| hex(v, p.1))));
            s += &f.join(" ");
            s += "\n";
        }
        s
    }
}

/// Requests in an MLU unit's vectors (each row holds 32 lane pointers and
/// addresses: about 1.5 KB per cycle at 32 lanes).
const UNIT_REQUESTS: u64 = 120;

/// The vectors of a committed top, by what its manifest says it is.
pub fn record(top: &Top) -> Result<Vectors> {
    let m = &top.manifest;
    let kind = TopKind::from_manifest(&m.block, &m.parameters).map_err(|e| anyhow!("{}.json: {e}", m.top))?;
    let v = match &kind {
        TopKind::Mlb { entries, replacement, hit_latency } => mlb(top, *entries, *replacement, *hit_latency)?,
        TopKind::Memcheck => memcheck(m),
        TopKind::MluUnit(p) => crate::unit_driver::record_vectors(top, p, UNIT_REQUESTS)?,
        TopKind::CanaryAlloc { .. } => canary(top)?,
    };
    ensure!(v.checks() > 0, "{}: the vectors compare no output", m.top);
    Ok(v)
}

/// MLB cycles of the cosimulation's random stimulus, expected outputs from
/// the model (module doc).
fn mlb(top: &Top, entries: usize, replacement: Replacement, hit_latency: usize) -> Result<Vectors> {
    const CYCLES: usize = 600;
    let layout = Layout::from_manifest(&top.manifest)?;
    let ports = MlbPorts::new(&layout, entries)?;
    let mut v = Vectors::new(
        &top.manifest,
        &[
            &format!("MLB, {entries} entries, {}: {CYCLES} cycles of the cosimulation's random stimulus (harness::mlb::MlbBench, seed 7).", replacement.name()),
            "Expected outputs: the golden model sim::mlb::Mlb::cycle; x where the model defines no value (a hit's data without a hit).",
        ],
    );
    if hit_latency == 2 {
        v.about.push("Two-stage MLB: search outputs are the model's one cycle later, a miss where a same-cycle fill replaced the hit entry (hw/src/mlb.rs, hit latency 2).".into());
    }
    let mut bench = MlbBench::new(entries, replacement, 7);
    let mut rec = vec![0u8; layout.in_bytes];
    let mut hist: Vec<MlbExpect> = vec![];
    for c in 0..CYCLES {
        let (stim, e) = bench.next();
        rec.iter_mut().for_each(|b| *b = 0);
        stim.encode(&ports, &mut rec);
        let ins = layout.inputs.iter().map(|p| read(p, &rec)).collect();
        hist.push(e);
        // The expectation whose search results this cycle shows.
        let search = if hit_latency == 1 { Some(e) } else { c.checked_sub(1).map(|k| hist[k]) };
        let mut outs = vec![None; v.outputs.len()];
        if e.check && search.is_some_and(|s| s.check) {
            let s = search.unwrap();
            // p2: the fill of the search's own cycle (two cycles ago).
            let fill = if hit_latency == 2 && c >= 2 { Some(hist[c - 2]) } else { None };
            let clobbered = |way: usize| fill.is_some_and(|f| f.fill_ok && f.victim == way);
            let mut set = |name: &str, val: u64| {
                if let Some(i) = v.outputs.iter().position(|p| p.0 == name) {
                    outs[i] = Some(val as u128);
                }
            };
            // p2: a hit whose way the fill of the search's cycle wrote is a miss.
            let rs = s.rs.hit.filter(|&(w, _)| !clobbered(w));
            let ls = s.ls.hit.filter(|&(w, _)| !clobbered(w));
            set("rs_hit", rs.is_some() as u64);
            set("rs_multi", s.rs.multi as u64);
            set("ls_hit", ls.is_some() as u64);
            set("ls_multi", s.ls.multi as u64);
            if let Some((w, en)) = rs {
                set("rs_way", w as u64);
                set("rs_loc", en.location >> 5);
                set("rs_base", en.base);
                set("rs_size", en.size);
                set("rs_tag", en.tag as u64);
            }
            if let Some((w, en)) = ls {
                set("ls_way", w as u64);
                set("ls_base", en.base);
                set("ls_size", en.size);
                set("ls_tag", en.tag as u64);
            }
            set("victim", e.victim as u64);
            set("fill_ok", e.fill_ok as u64);
            set("fill_present", e.fill_present as u64);
            set("repl_state", e.repl_state);
        }
        v.rows.push((ins, outs));
    }
    Ok(v)
}

/// MEMCHECK vectors: the edges (tag 0, FREED, location 0 and NO_META,
/// first/last byte and one past, widths) and random ones, from the model.
fn memcheck(m: &Manifest) -> Vectors {
    use sim::memcheck::{memcheck_g_decide, memcheck_s};
    use sim::node::Meta;
    use sim::pointer::{tag, tagged, untag, NO_META, TAG_FREED};
    let mut v = Vectors::new(
        m,
        &[
            "MEMCHECK (combinational): edge vectors (tag 0, FREED, location 0 and NO_META, first and last byte, one past, every width 1..16) and random ones.",
            "Expected outputs: the golden model sim::memcheck (memcheck_g_decide, memcheck_s).",
        ],
    );
    let mut rng = SplitMix64(0x0ec7_0125);
    let mut cases: Vec<(u64, u32, u64, Option<Meta>, u32, u32, u32, u32)> = vec![];
    let bases = [0u64, 0x1000, 0x7f00_0000_0000, (1u64 << 56) - 0x100];
    for (k, &base) in bases.iter().enumerate() {
        let size = [1u64, 24, 4096, 0x100][k];
        let t = 1 + k as u8 * 40;
        let meta = Meta { base, size, tag: t };
        let loc = 0x2000_0000 + 32 * k as u64;
        for w in [1u32, 2, 4, 8, 16] {
            for a in [base, base + size.saturating_sub(w as u64), base + size, base.wrapping_sub(1) & ((1 << 56) - 1)] {
                cases.push((tagged(t, a), w, loc, Some(meta), 0, 0, 0, 0));
            }
        }
        cases.push((tagged(t, base), 8, loc, None, 0, 0, 0, 0));
        cases.push((tagged(t ^ 1, base), 8, loc, Some(meta), 0, 0, 0, 0));
        cases.push((tagged(t, base), 8, loc, Some(Meta { tag: TAG_FREED, ..meta }), 0, 0, 0, 0));
        cases.push((untag(base), 8, loc, Some(meta), 0, 0, 0, 0));
        cases.push((tagged(t, base), 8, 0, Some(meta), 0, 0, 0, 0));
        cases.push((tagged(t, base), 8, NO_META, Some(meta), 0, 0, 0, 0));
    }
    for _ in 0..400 {
        let base = rng.range(0, 1 << 40);
        let size = rng.range(1, 1 << 12);
        let t = rng.range(1, 254) as u8;
        let a = base.wrapping_add(rng.range(0, size + 32)).wrapping_sub(16) & ((1 << 56) - 1);
        let ptag = if rng.range(0, 9) == 0 { rng.range(0, 255) as u8 } else { t };
        let w = [1u32, 2, 4, 8, 16][rng.range(0, 4) as usize];
        let loc = match rng.range(0, 19) {
            0 => 0,
            1 => NO_META,
            _ => 32 * rng.range(1, 1 << 30),
        };
        let meta = (rng.range(0, 9) != 0).then_some(Meta { base, size, tag: if rng.range(0, 14) == 0 { TAG_FREED } else { t } });
        let sb = rng.range(0, 1 << 16) as u32;
        let ss = rng.range(0, 4096) as u32;
        let sa = sb.wrapping_add(rng.range(0, ss as u64 + 32) as u32).wrapping_sub(16);
        cases.push((tagged(ptag, a), w, loc, meta, sa, [1u32, 2, 4, 8, 16][rng.range(0, 4) as usize], sb, ss));
    }
    for (p, w, loc, meta, sa, sw, sb, ss) in cases {
        let mm = meta.unwrap_or(Meta { base: 0, size: 0, tag: 0 });
        let need = tag(p) != 0 && loc != 0 && loc != NO_META;
        let g_fault = match meta {
            None if need => 0,
            _ => memcheck_g_decide(p, w, loc, meta).err().map_or(0, |f| f.bits()),
        };
        let s_fault = memcheck_s(sa as u64, sw, sb as u64, ss as u64).err().map_or(0, |f| f.bits());
        let ins: Vec<u128> = vec![p as u128, w as u128, loc as u128, meta.is_some() as u128, mm.base as u128, mm.size as u128, mm.tag as u128, sa as u128, sw as u128, sb as u128, ss as u128];
        // The split fault (hw::memcheck): the bounds test decides when the
        // metadata is there and its tag is neither FREED nor mismatched.
        let g_bchk = need && meta.is_some_and(|m| m.tag != TAG_FREED && m.tag == tag(p));
        let g_pre = if g_bchk { 0 } else { g_fault };
        let g_ok = sim::memcheck::in_bounds(untag(p), w, mm.base, mm.size);
        let (g_ge, g_c1, g_c2, g_c3) = in_bounds_parts(56, untag(p), w, mm.base, mm.size);
        assert_eq!(g_ok, g_ge && ((g_c1 && g_c2) || (g_c1 && g_c3.0) || (g_c2 && g_c3.0)), "the parts of in_bounds({p:#x}, {w}, {mm:?})");
        let (s_ge, s_c1, s_c2, s_c3) = in_bounds_parts(32, sa as u64, sw, sb as u64, ss as u64);
        assert_eq!(s_fault == 0, s_ge && ((s_c1 && s_c2) || (s_c1 && s_c3.0) || (s_c2 && s_c3.0)), "the parts of memcheck_s({sa:#x}, {sw}, {sb:#x}, {ss})");
        let outs = vec![
            need as u128,
            (!need || meta.is_some()) as u128,
            g_fault as u128,
            untag(p) as u128,
            g_pre as u128,
            g_bchk as u128,
            g_ok as u128,
            g_ge as u128,
            g_c1 as u128,
            g_c2 as u128,
            g_c3.1 as u128,
            g_c3.2 as u128,
            g_c3.3 as u128,
            (s_fault == 0) as u128,
            s_fault as u128,
            s_ge as u128,
            s_c1 as u128,
            s_c2 as u128,
            s_c3.1 as u128,
            s_c3.2 as u128,
            s_c3.3 as u128,
        ];
        v.rows.push((ins, outs.into_iter().map(Some).collect()));
    }
    v
}

/// A bounds test in parts (`hw::in_bounds::InBounds` at `bits` bits, 56 for
/// MEMCHECK.G and 32 for MEMCHECK.S: `ge`, and the carries out of the top
/// bit of `base + size + !a + !w + 2` summed as two carry-save rows and a
/// final add), from their definition; the caller checks they make up the
/// model's test. The final carry comes with its halves (`InBounds`'s
/// `c3_hi_gt`, `c3_hi_eq`, `c3_lo_ge`: the comparator `s2 >= !r`, r =
/// (c2 << 1) | 1, on the upper and lower `bits / 2` bits), checked here
/// against the widened sum.
type Carry3 = (bool, bool, bool, bool);
fn in_bounds_parts(bits: u32, a: u64, w: u32, base: u64, size: u64) -> (bool, bool, bool, Carry3) {
    let m: u64 = (1 << bits) - 1;
    let top = bits - 1;
    let maj = |x: u64, y: u64, z: u64| (x & y) | (x & z) | (y & z);
    let (na, nw) = (!a & m, !(w as u64) & m);
    let s1 = base ^ size ^ na;
    let c1 = maj(base, size, na);
    let c1s = (c1 << 1) & m;
    let s2 = s1 ^ c1s ^ nw;
    let c2 = maj(s1, c1s, nw);
    let fin = s2 as u128 + ((c2 << 1) & m) as u128 + 2;
    let c3 = fin >> bits & 1 == 1;
    let nr = !(((c2 << 1) & m) | 1) & m;
    let h = bits / 2;
    let (s2h, nrh, lo) = (s2 >> h, nr >> h, (1u64 << h) - 1);
    let halves = (s2h > nrh, s2h == nrh, s2 & lo >= nr & lo);
    assert_eq!(c3, halves.0 || (halves.1 && halves.2), "the halves of the final carry ({bits} bits, a {a:#x} w {w} base {base:#x} size {size:#x})");
    (a >= base, c1 >> top & 1 == 1, c2 >> top & 1 == 1, (c3, halves.0, halves.1, halves.2))
}

/// A canary-unit program: reset and key, mallocs, background checks, frees,
/// every grant, response and check applied to the model replay.
fn canary(top: &Top) -> Result<Vectors> {
    use hw::canary::alloc_unit::REQUESTERS;
    let params = crate::energy_workload::canary_params(top)?;
    let mut r = CanaryRec::start(top, &params)?;
    let sizes: Vec<(bool, u64)> = [8u64, 100, 200, 40].iter().map(|s| (false, *s)).collect();
    let (_, resps) = r.run(&sizes, None)?;
    let frees: Vec<(bool, u64)> = resps.iter().step_by(2).map(|x| (true, x.ptr)).collect();
    r.run(&frees, None)?;
    r.r.set("rate", 255)?;
    let mut checks = 0;
    for _ in 0..100 {
        checks += r.step(&[None; REQUESTERS])?.check.is_some() as usize;
    }
    r.r.set("rate", 0)?;
    for _ in 0..30 {
        r.step(&[None; REQUESTERS])?;
    }
    let end = r.r.cycles();
    let st = r.r.stimulus(end, 0, 1, "program", 1.0)?;
    r.r.finish()?;
    ensure!(checks > 0, "canary program: no background check ran");
    let mut v = Vectors::new(
        &top.manifest,
        &[
            &format!("Canary allocator unit: reset and key, 4 mallocs (8..200 bytes), 2 frees, 100 cycles of background checks at rate 255 ({checks} checks), 30 idle cycles; heap memory latency {MEMORY_LATENCY}."),
            "Expected outputs: this run's outputs under Verilator, every port from cycle 1, with every grant, response and check applied to the golden model's replay (canary_driver::ModelReplay) while recording.",
        ],
    );
    v.push_stimulus(&st)?;
    Ok(v)
}
