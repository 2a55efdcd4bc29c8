//! The far side of the MLU's metadata port, for the unit model's tests, the
//! cosimulation and the SM model: a memory behind a port that takes one
//! 32-byte read per cycle (or refuses it), answers each after its own random
//! latency, one response per cycle, in any order, and fails a chosen share
//! of reads (spec section 6: "responses come back in any order, with any
//! latency, and may carry an error").
//!
//! A read sees the memory as it is in the cycle the port takes it.
use crate::memory::MetaMemory;
use crate::runtime::SplitMix64;
use crate::walker::{MemReq, MemResp};

/// The port's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortParams {
    /// Latency of a read in cycles, uniform in `min..=max` (min >= 1).
    pub min_latency: u32,
    pub max_latency: u32,
    /// Percent of cycles the port takes a request (100: always ready).
    pub ready_percent: u32,
    /// Reads answered with an error, per million.
    pub errors_per_million: u32,
    /// When several responses are due, deliver a random one (else the
    /// oldest due).
    pub shuffle: bool,
    pub seed: u64,
}

impl Default for PortParams {
    fn default() -> Self {
        PortParams { min_latency: 20, max_latency: 20, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 1 }
    }
}

#[derive(Clone, Debug)]
struct Pending {
    due: u64,
    resp: MemResp,
}

/// The port.
#[derive(Clone, Debug)]
pub struct PortSim {
    p: PortParams,
    rng: SplitMix64,
    pending: Vec<Pending>,
    cycle: u64,
    /// Reads taken so far.
    pub reads: u64,
}

impl PortSim {
    pub fn new(p: PortParams) -> PortSim {
        assert!(p.min_latency >= 1 && p.min_latency <= p.max_latency, "port latency {}..={}", p.min_latency, p.max_latency);
        PortSim { rng: SplitMix64(p.seed), p, pending: vec![], cycle: 0, reads: 0 }
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    /// Reads taken and not yet answered.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// One cycle: whether the port takes `req`, and the response it delivers
    /// (from reads taken in earlier cycles).
    pub fn cycle(&mut self, mem: &(impl MetaMemory + ?Sized), req: Option<&MemReq>) -> (bool, Option<MemResp>) {
        let ready = self.p.ready_percent >= 100 || self.below(100) < self.p.ready_percent as u64;
        let due: Vec<usize> = (0..self.pending.len()).filter(|&i| self.pending[i].due <= self.cycle).collect();
        let resp = if due.is_empty() {
            None
        } else {
            let k = if self.p.shuffle {
                due[self.below(due.len() as u64) as usize]
            } else {
                *due.iter().min_by_key(|&&i| (self.pending[i].due, i)).expect("non-empty")
            };
            Some(self.pending.remove(k).resp)
        };
        if let (true, Some(r)) = (ready, req) {
            self.reads += 1;
            let (node, sol_node) = match r.sol {
                Some(a) => {
                    let n = mem.sol_lookup(a);
                    (n.unwrap_or(0), n)
                }
                None => (r.addr, None),
            };
            let mut data = [0u64; 4];
            let mut ok = true;
            if r.sol.is_none() || sol_node.is_some() {
                for (k, d) in data.iter_mut().enumerate() {
                    match mem.read_word(node.wrapping_add(8 * k as u64)) {
                        Ok(v) => *d = v,
                        Err(_) => ok = false,
                    }
                }
            }
            if self.p.errors_per_million > 0 && self.below(1_000_000) < self.p.errors_per_million as u64 {
                ok = false;
            }
            let lat = self.p.min_latency as u64 + self.below((self.p.max_latency - self.p.min_latency) as u64 + 1);
            self.pending.push(Pending { due: self.cycle + lat, resp: MemResp { id: r.id, data: ok.then_some(data), sol_node } });
        }
        self.cycle += 1;
        (ready, resp)
    }
}
