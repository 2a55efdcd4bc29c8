//! The interface of each generated top as its user needs it without reading
//! the Rust: every port's meaning, the encodings, the reset and handshake
//! rules, and the latencies. One description per block, kept beside the
//! registry (hw::generate) and rendered twice: into the manifest
//! (`<top>.json`, field `interface`) and into the head of `<top>.v` (a port
//! table in a comment, the encodings as `localparam`s of the top module).
//!
//! The prose is a summary of the block's module doc (hw/src/mlu.rs,
//! mlb.rs, memcheck.rs, mlu_unit.rs, canary/alloc_unit.rs), which
//! stays the reference. Emission fails when a port of the top has no entry
//! here, so a new port cannot ship undocumented.
use serde::{Deserialize, Serialize};
use sim::fault::{FaultCode, Op};
use sim::pointer::{NO_META, TAG_FREED};

/// What the manifest and the Verilog header say about a top.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    /// Port meanings, by port name (a name ending in `_<i>` is one of an
    /// array of ports, e.g. requester i's `req_valid_<i>`). Not serialized:
    /// the manifest gives each port's meaning with the port.
    #[serde(skip)]
    pub ports: Vec<PortDoc>,
    /// Named values of ports and fields, emitted as `localparam`s.
    pub encodings: Vec<Encoding>,
    /// What `reset` does (or that there is no state).
    pub reset: String,
    /// Handshake and same-cycle rules.
    pub handshake: Vec<String>,
    /// Cycles per operation.
    pub latencies: Vec<Latency>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortDoc {
    pub name: String,
    pub meaning: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Encoding {
    /// The `localparam` name, e.g. `OP_LOADMETA`.
    pub name: String,
    pub width: usize,
    /// In the manifest as a hex string ("0xffffffffffffffff"): JSON numbers
    /// above 2^53 lose bits in many readers.
    #[serde(with = "hex_u64")]
    pub value: u64,
    /// Which ports or fields carry it.
    pub applies_to: String,
}

mod hex_u64 {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:#x}"))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let t = String::deserialize(d)?;
        let h = t.strip_prefix("0x").ok_or_else(|| serde::de::Error::custom(format!("encoding value {t:?} is not 0x<hex>")))?;
        u64::from_str_radix(h, 16).map_err(|e| serde::de::Error::custom(format!("encoding value {t:?}: {e}")))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    pub operation: String,
    /// Cycles, or a formula in L (memory latency) and R (words a walk reads).
    pub cycles: String,
}

impl Interface {
    /// The meaning of port `name` (`req_valid_3` finds `req_valid_<i>`).
    pub fn meaning(&self, name: &str) -> Option<&str> {
        let array = name.rsplit_once('_').filter(|(_, i)| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit())).map(|(s, _)| format!("{s}_<i>"));
        self.ports.iter().find(|p| p.name == name || Some(&p.name) == array.as_ref()).map(|p| p.meaning.as_str())
    }
}

fn ports(list: &[(&str, &str)]) -> Vec<PortDoc> {
    list.iter().map(|(n, m)| PortDoc { name: n.to_string(), meaning: m.to_string() }).collect()
}

fn enc(name: &str, width: usize, value: u64, applies_to: &str) -> Encoding {
    Encoding { name: name.to_string(), width, value, applies_to: applies_to.to_string() }
}

fn lat(operation: &str, cycles: &str) -> Latency {
    Latency { operation: operation.to_string(), cycles: cycles.to_string() }
}

/// `FAULT_NONE` .. `FAULT_MEM_ERROR` (spec section 4 codes) on `ports`.
fn faults(ports: &str) -> Vec<Encoding> {
    FaultCode::ALL.iter().map(|f| enc(&format!("FAULT_{}", f.name()), 3, f.bits() as u64, ports)).collect()
}

/// The node-format values a check compares with.
fn node_values() -> Vec<Encoding> {
    vec![
        enc("LOC_NO_META", 64, NO_META, "location operand/result: no metadata node holds the address"),
        enc("TAG_FREED", 8, TAG_FREED as u64, "node tag of a freed allocation"),
    ]
}

/// The MLB, one-stage (`hit_latency` 1) or two-stage (2).
pub fn mlb(hit_latency: usize) -> Interface {
    let when = if hit_latency == 1 { "the previous cycle" } else { "two cycles ago" };
    let search = |port: &str| format!("{port} search of {when} hit (registered)");
    let rs_hit = search("range");
    let ls_hit = search("location");
    Interface {
        ports: ports(&[
            ("clock", "clock, rising edge"),
            ("reset", "synchronous reset: clears valid bits, replacement state, hit outputs; drops the cycle's fill"),
            ("rs_valid", "range search this cycle"),
            ("rs_addr", "range search: untagged address; hits base <= a < base + size"),
            ("ls_valid", "location search this cycle"),
            ("ls_loc", "location search: location bits 55..5"),
            ("fill_valid", "fill the victim way this cycle"),
            ("fill_loc", "fill: location bits 55..5"),
            ("fill_base", "fill: allocation base"),
            ("fill_size", "fill: allocation size in bytes"),
            ("fill_tag", "fill: allocation tag"),
            ("inv_valid", "invalidate every entry whose location is inv_loc"),
            ("inv_loc", "invalidate: location bits 55..5"),
            ("flush", "clear every valid bit and the replacement state"),
            ("fill_next_loc_<i>", "fill lookahead builds only (the MLU unit's MLB): candidate i for the next cycle's fill_loc"),
            ("fill_next_sel_<i>", "fill lookahead builds only: candidate i is the next cycle's fill (one-hot; none: no fill next cycle)"),
            ("rs_addr_entry_<i>", "entry-key builds only (the MLU unit's MLB): the range key entry i compares instead of rs_addr (equal to it while rs_valid)"),
            ("rs_hit", &rs_hit),
            ("rs_way", "range hit: way (meaningful while rs_hit)"),
            ("rs_loc", "range hit: location bits 55..5 (while rs_hit)"),
            ("rs_base", "range hit: base (while rs_hit)"),
            ("rs_size", "range hit: size (while rs_hit)"),
            ("rs_tag", "range hit: tag (while rs_hit)"),
            ("rs_multi", "range search matched more than one entry: one-hot assertion, must stay 0"),
            ("ls_hit", &ls_hit),
            ("ls_way", "location hit: way (while ls_hit)"),
            ("ls_base", "location hit: base (while ls_hit)"),
            ("ls_size", "location hit: size (while ls_hit)"),
            ("ls_tag", "location hit: tag (while ls_hit)"),
            ("ls_multi", "location search matched more than one entry: must stay 0"),
            ("nx_base", "rs_base | ls_base as they will be after this edge (combinational; for copies of the result)"),
            ("nx_size", "rs_size | ls_size as they will be after this edge (combinational)"),
            ("nx_tag", "rs_tag | ls_tag as they will be after this edge (combinational)"),
            ("victim", "way a fill in this cycle writes: lowest invalid, else the policy's (combinational)"),
            ("fill_ok", "the fill in this cycle is taken (combinational)"),
            ("fill_present", "the fill's location is already held: the fill writes nothing (combinational)"),
            ("repl_state", "replacement state: tree-PLRU bits (bit N-1 = 0) or round-robin pointer"),
        ]),
        encodings: vec![],
        reset: "Synchronous, active high, for one cycle after power-up (registers have initial values, no asynchronous reset).".into(),
        handshake: vec![
            "No handshake: every input is sampled at each rising edge; a search can start every cycle on each port.".into(),
            "Both searches and the victim see the state before the cycle's writes; at the edge flush > invalidate > fill.".into(),
            "A fill is dropped when the same cycle's invalidate names its location or clears the victim way, or when a valid entry already holds its location (fill_present); flush or reset drops it too. So no fill sequence makes a duplicate.".into(),
        ],
        latencies: vec![lat("search (range or location) to *_hit and data", &hit_latency.to_string()), lat("fill, invalidate, flush take effect", "1 (the next edge)")],
    }
}

/// The combinational MEMCHECK datapath.
pub fn memcheck() -> Interface {
    let mut encodings = faults("g_fault, s_fault");
    encodings.extend(node_values());
    Interface {
        ports: ports(&[
            ("g_ptr", "MEMCHECK.G: tagged pointer (tag in bits 63..56)"),
            ("g_width", "MEMCHECK.G: access width in bytes (1, 2, 4, 8, 16)"),
            ("g_loc", "MEMCHECK.G: location operand (0 or LOC_NO_META: no metadata)"),
            ("g_meta_valid", "metadata of g_loc is on g_meta_*"),
            ("g_meta_base", "metadata: allocation base"),
            ("g_meta_size", "metadata: allocation size"),
            ("g_meta_tag", "metadata: allocation tag (TAG_FREED once freed)"),
            ("g_need_meta", "the decision needs the metadata (tag != 0 and location neither 0 nor LOC_NO_META)"),
            ("g_done", "the decision is final (!g_need_meta || g_meta_valid)"),
            ("g_fault", "FAULT_* of the whole access [a, a + w); FAULT_NONE while !g_done"),
            ("g_addr", "untagged address"),
            ("g_pre", "FAULT_* were the access in bounds (g_fault without OUT_OF_BOUNDS)"),
            ("g_bchk", "the bounds test decides the fault (g_pre is FAULT_NONE)"),
            ("g_ok", "the whole access [a, a + w) lies in [base, base + size); g_fault = g_pre | (g_bchk & !g_ok)"),
            ("g_ge", "g_ok in parts (for a pipeline that registers them): a >= base"),
            ("g_c1", "g_ok in parts: the first carry-save row's dropped top carry; g_ok = g_ge & majority(g_c1, g_c2, g_c3)"),
            ("g_c2", "g_ok in parts: the second carry-save row's dropped top carry"),
            ("g_c3_hi_gt", "g_ok in parts: the final compare's carry out g_c3 = g_c3_hi_gt | (g_c3_hi_eq & g_c3_lo_ge): its upper 28 bits compare greater"),
            ("g_c3_hi_eq", "g_ok in parts: the final compare's upper 28 bits are equal"),
            ("g_c3_lo_ge", "g_ok in parts: the final compare's lower 28 bits compare greater or equal"),
            ("s_addr", "MEMCHECK.S: shared-memory address"),
            ("s_width", "MEMCHECK.S: access width in bytes"),
            ("s_base", "MEMCHECK.S: shared window base"),
            ("s_size", "MEMCHECK.S: shared window size"),
            ("s_ok", "the shared access is inside the window"),
            ("s_fault", "FAULT_NONE or FAULT_SHARED_OOB"),
            ("s_ge", "s_ok in parts (as g_ok's): s_addr >= s_base"),
            ("s_c1", "s_ok in parts: the first carry-save row's dropped top carry; s_ok = s_ge & majority(s_c1, s_c2, s_c3)"),
            ("s_c2", "s_ok in parts: the second carry-save row's dropped top carry"),
            ("s_c3_hi_gt", "s_ok in parts: the final compare's carry out s_c3 = s_c3_hi_gt | (s_c3_hi_eq & s_c3_lo_ge): its upper 16 bits compare greater"),
            ("s_c3_hi_eq", "s_ok in parts: the final compare's upper 16 bits are equal"),
            ("s_c3_lo_ge", "s_ok in parts: the final compare's lower 16 bits compare greater or equal"),
        ]),
        encodings,
        reset: "None: no state (combinational).".into(),
        handshake: vec!["Combinational: outputs follow the inputs in the same cycle.".into()],
        latencies: vec![lat("MEMCHECK.G and MEMCHECK.S decisions", "0 (combinational)")],
    }
}

/// The encodings of the MLU top: ops, faults, CSR addresses and values,
/// node values; `mode_use` and `structure_use` say where the MODE and
/// STRUCTURE values appear.
fn mlu_encodings(mode_use: &str, structure_use: &str) -> Vec<Encoding> {
    let mut encodings: Vec<Encoding> = Op::ALL.iter().map(|o| enc(&format!("OP_{}", o.name().replace('.', "_")), 3, o.bits() as u64, "req_op, resp_op")).collect();
    encodings.extend(faults("resp_fault"));
    encodings.extend([
        enc("CSR_MODE", 3, crate::mlu::CSR_MODE, "csr_addr"),
        enc("CSR_STRUCTURE", 3, crate::mlu::CSR_STRUCTURE, "csr_addr"),
        enc("CSR_ROOT", 3, crate::mlu::CSR_ROOT, "csr_addr"),
        enc("CSR_STEP_LIMIT", 3, crate::mlu::CSR_STEP_LIMIT, "csr_addr"),
        enc("CSR_HEAP_BASE", 3, crate::mlu::CSR_HEAP_BASE, "csr_addr"),
        enc("CSR_HEAP_MASK", 3, crate::mlu::CSR_HEAP_MASK, "csr_addr"),
        enc("CSR_HEAP_DIR", 3, crate::mlu::CSR_HEAP_DIR, "csr_addr"),
        enc("MODE_COMPILER", 1, sim::config::Mode::Compiler.bits() as u64, mode_use),
        enc("MODE_HWONLY", 1, sim::config::Mode::Hwonly.bits() as u64, mode_use),
        enc("STRUCTURE_LIST", 1, 0, structure_use),
        enc("STRUCTURE_BST", 1, 1, structure_use),
    ]);
    encodings.extend(node_values());
    encodings
}

/// The MLU as an SM unit (hw::mlu_unit): `lanes` 1 or 32, MLB search
/// latency `mlb_latency`, `walkers` K.
pub fn mlu_unit(lanes: usize, mlb_latency: usize, check_latency: usize, walkers: usize) -> Interface {
    let p = [
        ("clock", "clock, rising edge"),
        ("reset", "synchronous reset: pipeline, miss slots, walkers and MLB empty; CSRs at their reset values"),
        ("req_valid", "a request is offered"),
        ("req_ready", "the unit takes the offered request at this edge (from registers)"),
        ("req_id", "requester's tag, returned as resp_id"),
        ("req_op", "OP_*; 5..7 are answered FAULT_NONE and do nothing"),
        ("req_mask_<i>", "MEMCHECK: lane i is active (LOADMETA uses lane 0)"),
        ("req_ptr_<i>", "lane i: LOADMETA/MEMCHECK.G tagged pointer; MEMCHECK.S shared address in bits 31..0"),
        ("req_width", "MEMCHECK: access width in bytes (1, 2, 4, 8, 16), the same for every lane"),
        ("req_loc", "MEMCHECK.G and INVALIDATE: location operand (one per instruction)"),
        ("req_sbase", "MEMCHECK.S: shared window base"),
        ("req_ssize", "MEMCHECK.S: shared window size"),
        ("resp_valid", "a response in this cycle; no resp_ready (always taken)"),
        ("resp_id", "req_id of the request answered (responses overtake each other)"),
        ("resp_op", "OP_* of the request answered"),
        ("resp_pass_<i>", "MEMCHECK: lane i is active and passed (0 for an inactive lane)"),
        ("resp_fault", "FAULT_* of the lowest faulting lane (spec section 4 order per lane)"),
        ("resp_lane", "the lowest faulting lane (0 when none)"),
        ("resp_loc", "LOADMETA: the location (0 for tag 0, LOC_NO_META when none or on a fault)"),
        ("resp_meta_valid", "resp_base/size/tag hold the metadata the request was checked against"),
        ("resp_base", "metadata: allocation base (while resp_meta_valid)"),
        ("resp_size", "metadata: allocation size (while resp_meta_valid)"),
        ("resp_tag", "metadata: allocation tag (while resp_meta_valid)"),
        ("resp_addr_<i>", "lane i: the untagged address (bits 55..0)"),
        ("mem_req_valid", "metadata read of one 32-byte node (from registers)"),
        ("mem_req_ready", "memory takes the read at this edge"),
        ("mem_req_id", "the walker reading (returned as mem_resp_id)"),
        ("mem_req_node", "node address bits 55..5"),
        ("mem_resp_valid", "a node arrives (any order, at least one cycle after its request; always taken)"),
        ("mem_resp_id", "mem_req_id of the read answered"),
        ("mem_resp_error", "the read failed (the walk answers FAULT_MEM_ERROR)"),
        ("mem_resp_base", "node word 0: allocation base"),
        ("mem_resp_size_tag", "node word 1: size (bits 55..0) and tag (bits 63..56)"),
        ("mem_resp_link0", "node word 2: left child / next"),
        ("mem_resp_link1", "node word 3: right child"),
        ("csr_we", "CSR write at this edge (only while no request is in flight)"),
        ("csr_addr", "CSR_*"),
        ("csr_data", "CSR write data"),
        ("cnt_lookups", "counter (32-bit, wrapping, registered): MLB searches"),
        ("cnt_hits", "counter: MLB searches that hit"),
        ("cnt_misses", "counter: searches that missed (each takes a miss slot)"),
        ("cnt_merged", "counter: misses that joined a walk in flight or a waiting miss of their block"),
        ("cnt_nodes", "counter: nodes visited by the walkers"),
        ("cnt_faults", "counter: responses with a fault"),
    ];
    let encodings = mlu_encodings("MODE CSR bit 0", "STRUCTURE CSR bit 0");
    let hit = (1 + mlb_latency + check_latency).to_string();
    Interface {
        ports: ports(&p),
        encodings,
        reset: "Synchronous, active high, for one cycle after power-up; a metadata read outstanding at reset must not be answered afterwards (reset the memory side too).".into(),
        handshake: vec![
            format!("Request: taken at an edge where req_valid && req_ready; one per cycle. {lanes} lane(s): one pointer and one active bit per lane, one width and one location per instruction."),
            "req_ready is low in a cycle a waiting miss re-enters the pipeline, and when the free miss slots could not hold a miss of every request in flight plus this one.".into(),
            format!("Misses wait in miss slots; a miss to a block already being walked joins that walk; {walkers} walker(s) walk at once. Responses carry resp_id and overtake each other."),
            "INVALIDATE and FLUSH act on the MLB in the cycle after they are taken, in order with the requests around them, and cancel every walk in flight (it fills nothing): a freed allocation's entry never survives.".into(),
            "Metadata port: one 32-byte node per read; up to one read per walker outstanding, tagged by mem_req_id; responses in any order and latency >= 1.".into(),
            "Every response equals the golden model sim::mlu_unit::MluUnit's, cycle for cycle.".into(),
            "cnt_* equal the model's counters once the unit has been idle for two cycles (an event is registered, then counted: up to two cycles after the model counts it).".into(),
        ],
        latencies: vec![
            lat(&format!("from the cycle a request is taken to its resp_valid cycle (1 + m + c: MLB search latency m = {mlb_latency}, lane-check stages c = {check_latency})"), ""),
            lat("MLB hit, tag-0 pointer, location 0/LOC_NO_META, MEMCHECK.S, INVALIDATE, FLUSH (fixed, one per cycle in any mix)", &hit),
            lat("miss", &format!("{hit} + the walk (or the merged walk's remainder) + re-entry")),
        ],
    }
}

/// The canary allocator unit.
pub fn canary() -> Interface {
    use crate::canary::alloc_unit::*;
    Interface {
        ports: ports(&[
            ("clock", "clock, rising edge"),
            ("reset", "synchronous reset: empties the heap, the checker and the arbiter"),
            ("key_we", "load key_k0/key_k1 into the secret key register"),
            ("key_k0", "SipHash key, low word"),
            ("key_k1", "SipHash key, high word"),
            ("rate", "background checker rate: rate/256 checks per idle cycle"),
            ("req_valid_<i>", "requester i offers a request (hold until req_grant_<i>)"),
            ("req_free_<i>", "requester i: REQ_MALLOC or REQ_FREE"),
            ("req_arg_<i>", "requester i: malloc size, or the pointer to free"),
            ("req_grant_<i>", "requester i's request is taken in this cycle (combinational, one-cycle pulse)"),
            ("resp_valid", "response pulse (one per grant, before the next grant)"),
            ("resp_id", "requester answered"),
            ("resp_free", "the response answers a free"),
            ("resp_code", "RES_*"),
            ("resp_ptr", "malloc: the pointer; free: the chunk address"),
            ("resp_size", "free: the size the chunk was allocated with"),
            ("resp_front", "free: the front canary was overwritten"),
            ("resp_rear", "free: the rear canary was overwritten"),
            ("resp_new_page", "successful malloc: its page was empty and is now claimed for its class (the MLB must drop the whole page's entries)"),
            ("chk_done", "background check done (pulse)"),
            ("chk_chunk", "background check: the chunk checked"),
            ("chk_front", "background check: front canary overwritten"),
            ("chk_rear", "background check: rear canary overwritten"),
            ("mem_valid", "heap memory access (always accepted)"),
            ("mem_we", "heap access is a write"),
            ("mem_addr", "heap access: byte address of an 8-byte little-endian word (may be unaligned)"),
            ("mem_wdata", "heap write data"),
            ("mem_rvalid", "heap read data valid (one per read, at least one cycle later)"),
            ("mem_rdata", "heap read data"),
            ("dir_g", "directory lookup: the granule (32 B) index of an address in the heap"),
            ("dir_hit", "the granule's chunk under its page's last class has a record (0 when built without tags)"),
            ("dir_chunk", "that chunk's first granule"),
            ("dir_size", "its requested size"),
            ("dir_tag", "its tag, or FREED (0xFF) after free"),
        ]),
        encodings: vec![
            enc("REQ_MALLOC", 1, 0, "req_free_<i>, resp_free"),
            enc("REQ_FREE", 1, 1, "req_free_<i>, resp_free"),
            enc("RES_OK", 3, RES_OK, "resp_code"),
            enc("RES_ZERO_SIZE", 3, RES_ZERO_SIZE, "resp_code"),
            enc("RES_TOO_LARGE", 3, RES_TOO_LARGE, "resp_code"),
            enc("RES_EXHAUSTED", 3, RES_EXHAUSTED, "resp_code"),
            enc("RES_OUTSIDE_HEAP", 3, RES_OUTSIDE_HEAP, "resp_code"),
            enc("RES_NOT_A_CHUNK", 3, RES_NOT_A_CHUNK, "resp_code"),
            enc("RES_DOUBLE_FREE", 3, RES_DOUBLE_FREE, "resp_code"),
        ],
        reset: "Synchronous, active high, for one cycle after power-up; load the key (key_we) before the first malloc.".into(),
        handshake: vec![
            "Requester i holds req_valid_<i>, req_free_<i>, req_arg_<i> until req_grant_<i>; same-cycle requests are granted round robin.".into(),
            "One request at a time: its response (resp_valid) comes before the next grant; no back-pressure on responses.".into(),
            "A due background check (rate) takes an idle cycle before requests and reports on chk_*.".into(),
            "Memory port: no ready; each read (mem_valid && !mem_we) gets exactly one mem_rvalid, at least one cycle later.".into(),
        ],
        latencies: vec![
            lat("malloc (probe one page per cycle, SipHash of both canaries)", "about 25 (docs/canary.md)"),
            lat("free (both canaries read and checked)", "about 29 (docs/canary.md)"),
            lat("background check", "about 25 (docs/canary.md)"),
        ],
    }
}

/// The header comment of a top's `.v` file: ports (in `ports` order, with
/// the meanings emission resolved), reset, handshake, latencies, and where the encodings
/// are.
pub fn header(top: &str, block: &str, generator: &str, parameters: &str, iface: &Interface, ports: &[crate::manifest::Port]) -> String {
    let mut s = format!(
        "// {top}.v: the top {top} ({block}) and its private sub-modules.\n\
         // Generated by {generator} with rust-hdl 0.46; do not edit.\n\
         // Regenerate with `mlugen generate --all`; {top}.json holds the same in JSON.\n\
         // Parameters: {parameters}\n//\n"
    );
    let nw = ports.iter().map(|p| p.name.len()).max().unwrap_or(4).max(4);
    s += &format!("// Ports:\n//   {:nw$}  dir  width  meaning\n", "name");
    for p in ports {
        let dir = if p.direction == "input" { "in" } else { "out" };
        s += &format!("//   {:nw$}  {dir:3}  {:5}  {}\n", p.name, p.width, p.meaning);
    }
    s += "//\n";
    s += &wrap("// Reset: ", "//   ", &iface.reset);
    s += "// Handshake:\n";
    for h in &iface.handshake {
        s += &wrap("//   - ", "//     ", h);
    }
    s += "// Latency (cycles):\n";
    for l in &iface.latencies {
        if l.cycles.is_empty() {
            s += &wrap("//   ", "//   ", &format!("{}:", l.operation));
        } else {
            s += &format!("//   - {}: {}\n", l.operation, l.cycles);
        }
    }
    if !iface.encodings.is_empty() {
        s += &format!("// Encodings: the localparams at the head of module {top}.\n");
    }
    s
}

/// `text` after `first`, continued after `rest`, in lines of at most 96
/// characters.
fn wrap(first: &str, rest: &str, text: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut fresh = true;
    for w in text.split_whitespace() {
        if !fresh && line.len() + 1 + w.len() > 96 {
            out += &line;
            out += "\n";
            line = rest.to_string();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line += w;
        fresh = false;
    }
    out + &line + "\n"
}

/// The encodings as `localparam` lines for the top module's body.
pub fn localparams(iface: &Interface) -> String {
    if iface.encodings.is_empty() {
        return String::new();
    }
    let range = |e: &Encoding| if e.width > 1 { format!("[{}:0]", e.width - 1) } else { String::new() };
    let w = iface.encodings.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let rw = iface.encodings.iter().map(|e| range(e).len()).max().unwrap_or(0);
    let mut s = String::from("\n    // Encodings of the interface (for the user's testbench and integration;\n    // the logic below does not refer to them).\n");
    for e in &iface.encodings {
        s += &format!("    localparam {:rw$} {:w$} = {}'h{:x}; // {}\n", range(e), e.name, e.width, e.value, e.applies_to);
    }
    s
}
