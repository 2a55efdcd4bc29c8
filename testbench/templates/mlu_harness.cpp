// Transaction-level Verilator harness for the MLU top `{{ top }}`, generated
// by mlugen (testbench/templates/mlu_harness.cpp) from the top's manifest; do
// not edit. It runs the request/response handshake and the metadata memory
// (a hash map of 8-byte words with a seeded random latency and ready) inside
// C++, so Rust sends whole transactions, not cycles. Ports (hw/src/mlu.rs):
// {% for p in ports %}{{ p.name }}[{{ p.width }}] {% endfor %}
//
// Commands (stdin; little-endian; see testbench/src/harness/mlu.rs):
//   'W' addr u64, data u64      memory word write (also clears a poison)
//   'D' addr u64                forget a word (reads answer error)
//   'P' addr u64                poison a word (reads answer error)
//   'Z'                         forget every word
//   'L' lmin u32, lmax u32, ready u32, seed u64
//                               memory latency drawn in [lmin, lmax] (>= 1)
//                               per read; mem_req_ready high with
//                               probability ready/100 per cycle
//   'S' addr u8, data u64       one cycle with csr_we (the MLU is idle)
//   'X'                         one cycle of reset; the memory side drops any
//                               read in flight
//   'O' op u8, width u8, ptr u64, loc u64, sbase u32, ssize u32
//                               one MLU request: wait for req_ready, hold
//                               req_valid until taken, run until resp_valid
//   'H' hmin u32, hmax u32, seed u64
//                               fault injection: hold mem_req_ready low for
//                               a number of cycles drawn in [hmin, hmax] for
//                               every memory request (on top of 'L's ready;
//                               hmax 0 turns it off)
//   'T' k u32, kind u8, n u16, n x (addr u64, data u64)
//                               fault injection for the next 'O' only: when
//                               the memory takes that request's read number
//                               k (from 0), kind 0 answers it with an error;
//                               kind 1 first writes the n words (a node
//                               changing under a walk: reads k.. see them)
//   'K'                         read counters and CSRs
//   'V' len u16, path           start a VCD (trace builds)
//   'F'                         send every response collected so far
//   'Q'                         exit
// Responses (stdout, written only at 'F', so the harness never blocks on
// its output while Rust is still writing a batch):
//   per 'O', 56 bytes: fault u8, op u8, flags u8, 0 u8, cycles u32 (take edge
//     to response cycle), loc u64, addr u64, base u64, size u64, reads u32
//     (memory requests taken), lat u32 (sum of the latencies drawn),
//     stall u32 (cycles mem_req_valid waited for mem_req_ready), 0 u32
//   per 'K', 20 u64: the 14 counters (cnt_loadmeta .. cnt_flushes), csr_mode,
//     csr_structure, csr_root, csr_step_limit, cycles so far, flags seen
//     in idle cycles
// flags: 1 mlb_multi was high, 2 no response within the cycle limit,
//   4 resp_valid without a request in flight, 8 memory port misuse (request
//   address not 8-byte aligned, or a request changed or dropped before taken),
//   16 the 'T' injection fired (the request's read k was taken).
#include "Vdut.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

static const uint64_t CYCLE_LIMIT = {{ cycle_limit }}ULL;

struct Rng {
    uint64_t s;
    uint64_t next() {
        s += 0x9E3779B97F4A7C15ULL;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
};

struct Resp { uint64_t due; uint64_t data; bool error; };

static Vdut* top;
#if VM_TRACE
static VerilatedVcdC* vcd = nullptr;
#endif
static uint64_t now = 0;
static std::unordered_map<uint64_t, uint64_t> words;
static std::unordered_set<uint64_t> poisoned;
static std::deque<Resp> inflight;
static Rng rng{1};
static uint32_t lmin = 1, lmax = 1, ready_pct = 100;
// Per-operation statistics of the memory port.
static uint32_t op_reads, op_lat, op_stall;
static uint8_t flags;
static bool pending_valid = false;
static uint64_t pending_addr = 0;
// Fault injection ('H', 'T'); off unless commanded, so runs without them
// draw the same random numbers as before.
static uint32_t hold_min = 0, hold_max = 0, hold_left = 0;
static Rng hold_rng{1};
static uint32_t draw_hold() {
    return hold_min + (hold_max > hold_min ? (uint32_t)(hold_rng.next() % (hold_max - hold_min + 1)) : 0);
}
static bool trig_next = false, trig_live = false;
static uint32_t trig_k = 0;
static uint8_t trig_kind = 0;
static std::vector<std::pair<uint64_t, uint64_t>> trig_writes;

static void mem_answer(uint64_t addr) {
    bool inject = trig_live && op_reads == trig_k;
    if (inject) {
        trig_live = false;
        flags |= 16;
        if (trig_kind == 1)
            for (auto& w : trig_writes) { words[w.first] = w.second; poisoned.erase(w.first); }
    }
    Resp r;
    uint32_t lat = lmin + (lmax > lmin ? (uint32_t)(rng.next() % (lmax - lmin + 1)) : 0);
    r.due = now + lat;
    auto it = words.find(addr);
    r.error = (addr & 7) != 0 || it == words.end() || poisoned.count(addr);
    if (inject && trig_kind == 0) r.error = true;
    r.data = r.error ? 0 : it->second;
    inflight.push_back(r);
    op_reads++;
    op_lat += lat;
    if (addr & 7) flags |= 8;
}

// One clock cycle: drive the memory side, settle, sample (the memory port,
// then `pre`, with the cycle's inputs applied), rising edge.
template <class Pre> static void cycle(Pre pre) {
    top->mem_req_ready = (ready_pct >= 100 || (rng.next() % 100) < ready_pct) && hold_left == 0;
    if (!inflight.empty() && inflight.front().due == now) {
        top->mem_resp_valid = 1;
        top->mem_resp_data = inflight.front().data;
        top->mem_resp_error = inflight.front().error;
        inflight.pop_front();
    } else {
        // Garbage on the data lines: a design must look at valid only.
        top->mem_resp_valid = 0;
        top->mem_resp_data = rng.next();
        top->mem_resp_error = rng.next() & 1;
    }
    top->clock = 0;
    top->eval();
    if (top->mlb_multi) flags |= 1;
    if (top->mem_req_valid) {
        if (pending_valid && pending_addr != top->mem_req_addr) flags |= 8;
        if (top->mem_req_ready) {
            mem_answer(top->mem_req_addr);
            pending_valid = false;
            if (hold_max) hold_left = draw_hold();
        } else {
            op_stall++;
            if (hold_left) hold_left--;
            pending_valid = true;
            pending_addr = top->mem_req_addr;
        }
    } else if (pending_valid) {
        flags |= 8;
        pending_valid = false;
    }
    pre();
#if VM_TRACE
    if (vcd) vcd->dump(now * 10);
#endif
    top->clock = 1;
    top->eval();
#if VM_TRACE
    if (vcd) vcd->dump(now * 10 + 5);
#endif
    ++now;
}
static void cycle() { cycle([] {}); }

static void idle_inputs() {
    top->reset = 0;
    top->req_valid = 0;
    top->csr_we = 0;
}

static void must_read(void* buf, size_t n) {
    if (n && fread(buf, 1, n, stdin) != n) { fprintf(stderr, "harness: short read on stdin\n"); exit(3); }
}
static uint64_t rd(int n) {
    uint8_t b[8] = {0};
    must_read(b, n);
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}
static void put(std::vector<uint8_t>& o, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) { o.push_back((uint8_t)v); v >>= 8; }
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    Verilated::randReset(2);
    uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
    Verilated::randSeed((int)(seed & 0x7fffffff));
    top = new Vdut;
#if VM_TRACE
    Verilated::traceEverOn(true);
#endif
    static char ibuf[1 << 20];
    setvbuf(stdin, ibuf, _IOFBF, sizeof ibuf);
    std::vector<uint8_t> out;
    idle_inputs();
    top->clock = 0;
    top->eval();
    uint8_t idle_flags = 0;
    for (;;) {
        int cmd = fgetc(stdin);
        if (cmd == EOF || cmd == 'Q') break;
        switch (cmd) {
        case 'W': { uint64_t a = rd(8), d = rd(8); words[a] = d; poisoned.erase(a); break; }
        case 'D': { uint64_t a = rd(8); words.erase(a); poisoned.erase(a); break; }
        case 'P': { uint64_t a = rd(8); poisoned.insert(a); break; }
        case 'Z': words.clear(); poisoned.clear(); break;
        case 'L': {
            lmin = (uint32_t)rd(4); lmax = (uint32_t)rd(4); ready_pct = (uint32_t)rd(4); rng.s = rd(8);
            if (lmin < 1) lmin = 1;
            if (lmax < lmin) lmax = lmin;
            break;
        }
        case 'H': {
            hold_min = (uint32_t)rd(4); hold_max = (uint32_t)rd(4); hold_rng.s = rd(8);
            if (hold_max < hold_min) hold_max = hold_min;
            hold_left = hold_max ? draw_hold() : 0;
            break;
        }
        case 'T': {
            trig_k = (uint32_t)rd(4); trig_kind = (uint8_t)rd(1);
            uint64_t n = rd(2);
            trig_writes.clear();
            for (uint64_t i = 0; i < n; ++i) { uint64_t a = rd(8), d = rd(8); trig_writes.push_back({a, d}); }
            trig_next = true;
            break;
        }
        case 'S': {
            uint64_t a = rd(1), d = rd(8);
            idle_inputs();
            top->csr_we = 1; top->csr_addr = a; top->csr_data = d;
            flags = 0;
            cycle();
            idle_flags |= flags;
            top->csr_we = 0;
            break;
        }
        case 'X': {
            idle_inputs();
            top->reset = 1;
            flags = 0;
            cycle();
            top->reset = 0;
            inflight.clear();
            pending_valid = false;
            break;
        }
        case 'O': {
            uint64_t op = rd(1), width = rd(1), ptr = rd(8), loc = rd(8), sbase = rd(4), ssize = rd(4);
            idle_inputs();
            flags = 0;
            op_reads = op_lat = op_stall = 0;
            trig_live = trig_next;
            trig_next = false;
            top->req_op = op; top->req_width = width; top->req_ptr = ptr;
            top->req_loc = loc; top->req_sbase = sbase; top->req_ssize = ssize;
            top->req_valid = 1;
            uint64_t start = now, taken = 0;
            bool is_taken = false, got = false;
            uint8_t fault = 0, rop = 0;
            uint64_t rloc = 0, raddr = 0, rbase = 0, rsize = 0, cycles = 0;
            while (now - start < CYCLE_LIMIT) {
                bool take = false;
                cycle([&] {
                    if (top->resp_valid) {
                        if (!is_taken) {
                            flags |= 4;
                        } else {
                            got = true;
                            fault = top->resp_fault; rop = top->resp_op; rloc = top->resp_loc;
                            raddr = top->resp_addr; rbase = top->resp_base; rsize = top->resp_size;
                            cycles = now - taken;
                        }
                    }
                    take = !is_taken && top->req_ready;
                    if (take) taken = now;
                });
                if (take) { is_taken = true; top->req_valid = 0; }
                if (got) break;
            }
            if (!got) flags |= 2;
            trig_live = false;
            top->req_valid = 0;
            out.push_back(fault); out.push_back(rop); out.push_back(flags); out.push_back(0);
            put(out, cycles, 4); put(out, rloc, 8); put(out, raddr, 8); put(out, rbase, 8); put(out, rsize, 8);
            put(out, op_reads, 4); put(out, op_lat, 4); put(out, op_stall, 4); put(out, 0, 4);
            break;
        }
        case 'K': {
            idle_inputs();
            top->clock = 0;
            top->eval();
            const uint64_t c[14] = {
                top->cnt_loadmeta, top->cnt_memcheck_g, top->cnt_memcheck_s, top->cnt_range_lookups,
                top->cnt_range_hits, top->cnt_range_misses, top->cnt_loc_lookups, top->cnt_loc_hits,
                top->cnt_loc_misses, top->cnt_steps, top->cnt_meta_reads, top->cnt_faults,
                top->cnt_invalidates, top->cnt_flushes};
            for (int i = 0; i < 14; ++i) put(out, c[i], 8);
            put(out, top->csr_mode, 8); put(out, top->csr_structure, 8); put(out, top->csr_root, 8);
            put(out, top->csr_step_limit, 8); put(out, now, 8); put(out, idle_flags, 8);
            break;
        }
        case 'V': {
            std::vector<char> path(rd(2) + 1, 0);
            must_read(path.data(), path.size() - 1);
#if VM_TRACE
            if (!vcd) { vcd = new VerilatedVcdC; top->trace(vcd, 99); vcd->open(path.data()); }
#else
            fprintf(stderr, "harness: built without --trace, cannot write %s\n", path.data());
            return 4;
#endif
            break;
        }
        case 'F':
            if (!out.empty() && fwrite(out.data(), 1, out.size(), stdout) != out.size()) return 5;
            fflush(stdout);
            out.clear();
            break;
        default:
            fprintf(stderr, "harness: unknown command %d\n", cmd);
            return 2;
        }
    }
#if VM_TRACE
    if (vcd) { vcd->dump(now * 10); vcd->close(); }
#endif
    top->final();
    delete top;
    return 0;
}
