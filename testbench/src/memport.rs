//! MemPort: a cycle-level model of the metadata memory port that the RTL
//! traverser and MLU read through (8-byte word reads), backed by a word
//! image of the metadata memory.
//!
//! Protocol modelled (as documented on `hw::traverser::Traverser`):
//! - request `valid`/`ready`/`addr`: taken at a rising edge where both valid
//!   and ready are high; `ready` is drawn per cycle (always high when
//!   `ready_percent` is 100) and never depends on `valid` in the same cycle;
//! - response `valid`/`data`/`error`: exactly one per request taken, in order,
//!   `latency` cycles after the edge that took the request (latency >= 1:
//!   latency 1 answers in the very next cycle), fixed or random per request.
//! - a read the image answers with an error (`sim::memory::MemError`:
//!   unmapped, poisoned or unaligned word) gets `error` high and data 0, so
//!   the RTL sees exactly the errors the golden model sees.
//!
//! Use per cycle: `let o = port.outputs();` drive the DUT's inputs with `o`,
//! settle the DUT, then `port.edge(req_valid, req_addr)` just before the
//! clock edge. `reads` collects every address taken, in order.
use sim::memory::MetaMemory;
use std::collections::VecDeque;

/// splitmix64: small, seedable, and the same generator the runtime uses
/// for tags, so tests are reproducible from a seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        // The runtime's generator, one step on this state.
        let mut g = sim::runtime::SplitMix64(self.0);
        let v = g.next_u64();
        self.0 = g.0;
        v
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// Memory response latency in cycles (>= 1).
#[derive(Clone, Copy, Debug)]
pub enum Latency {
    Fixed(u32),
    /// Drawn uniformly in lo..=hi for every request.
    Random(u32, u32),
}

/// What the memory drives in the current cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortOut {
    pub req_ready: bool,
    pub resp_valid: bool,
    pub resp_data: u64,
    pub resp_error: bool,
}

pub struct MemPort<'a> {
    image: &'a dyn MetaMemory,
    pub latency: Latency,
    /// Chance (0..=100) that `ready` is high in a cycle.
    pub ready_percent: u64,
    /// Every request taken, in order.
    pub reads: Vec<u64>,
    rng: Rng,
    cycle: u64,
    /// (cycle at which the response is driven, data, error), in order.
    pending: VecDeque<(u64, u64, bool)>,
    current: PortOut,
    drawn: bool,
}

impl<'a> MemPort<'a> {
    pub fn new(image: &'a dyn MetaMemory, latency: Latency, seed: u64) -> Self {
        if let Latency::Fixed(l) = latency {
            assert!(l >= 1, "memory latency must be at least 1 cycle");
        }
        if let Latency::Random(lo, hi) = latency {
            assert!(1 <= lo && lo <= hi, "bad latency range {lo}..={hi}");
        }
        MemPort {
            image,
            latency,
            ready_percent: 100,
            reads: Vec::new(),
            rng: Rng(seed),
            cycle: 0,
            pending: VecDeque::new(),
            current: PortOut::default(),
            drawn: false,
        }
    }

    /// Point the port at another image (e.g. after the runtime changed it).
    pub fn set_image(&mut self, image: &'a dyn MetaMemory) {
        self.image = image;
    }

    /// The memory's outputs in the current cycle (stable within the cycle).
    pub fn outputs(&mut self) -> PortOut {
        if !self.drawn {
            let ready = self.ready_percent >= 100 || self.rng.range(0, 99) < self.ready_percent;
            let mut o = PortOut { req_ready: ready, ..Default::default() };
            if let Some(&(due, data, error)) = self.pending.front() {
                if due == self.cycle {
                    o.resp_valid = true;
                    o.resp_data = data;
                    o.resp_error = error;
                }
            }
            self.current = o;
            self.drawn = true;
        }
        self.current
    }

    /// Nothing outstanding and nothing being answered.
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// The clock edge at the end of the current cycle, given what the DUT
    /// drives on the request side in this cycle.
    pub fn edge(&mut self, req_valid: bool, req_addr: u64) {
        let o = self.outputs();
        if o.resp_valid {
            self.pending.pop_front();
        }
        if req_valid && o.req_ready {
            self.reads.push(req_addr);
            let lat = match self.latency {
                Latency::Fixed(l) => l as u64,
                Latency::Random(lo, hi) => self.rng.range(lo as u64, hi as u64),
            };
            // In order: never before the previous response.
            let after = self.pending.back().map(|p| p.0 + 1).unwrap_or(0);
            let due = (self.cycle + lat).max(after);
            let (data, error) = match self.image.read_word(req_addr) {
                Ok(w) => (w, false),
                Err(_) => (0, true),
            };
            self.pending.push_back((due, data, error));
        }
        self.cycle += 1;
        self.drawn = false;
    }

    /// Forget outstanding requests (the DUT was reset).
    pub fn reset(&mut self) {
        self.pending.clear();
        self.drawn = false;
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }
}
