//! MluDriver: drives the RTL MLU top (`hw::mlu::Mlu`) in rust-hdl simulation
//! with the clock driven by hand: reset, CSR writes, one request at a time
//! through the req/resp handshake, the metadata memory port served by a
//! `MemPort`. Used by testbench/tests/mlu.rs and by `mlugen wave`.
//!
//! Every cycle it checks the MLB's one-hot assertion (`mlb_multi`) and that
//! `resp_valid` comes exactly once per request. An optional VCD writer
//! records every signal of the design at every clock edge.
use crate::memport::MemPort;
use hw::mlu::Mlu;
use rust_hdl::core::vcd_probe::{write_vcd_change, write_vcd_dump, write_vcd_header, VCDProbe};
use rust_hdl::prelude::*;
use std::io::Write;

/// One MLU request (the request port's fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub op: u8,
    pub ptr: u64,
    pub width: u8,
    pub loc: u64,
    pub sbase: u32,
    pub ssize: u32,
}

/// One MLU response, with the cycles it took (from the edge that took the
/// request to the response cycle) and the metadata words it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub op: u8,
    pub fault: u8,
    pub loc: u64,
    pub addr: u64,
    pub base: u64,
    pub size: u64,
    pub cycles: u64,
    pub reads: Vec<u64>,
}

/// The 14 counters, in `sim::mlu::Counters` field order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtlCounters {
    pub loadmeta: u64,
    pub memcheck_g: u64,
    pub memcheck_s: u64,
    pub range_lookups: u64,
    pub range_hits: u64,
    pub range_misses: u64,
    pub loc_lookups: u64,
    pub loc_hits: u64,
    pub loc_misses: u64,
    pub steps: u64,
    pub meta_reads: u64,
    pub faults: u64,
    pub invalidates: u64,
    pub flushes: u64,
}

impl RtlCounters {
    /// The model's counters truncated to the RTL's 32 bits.
    pub fn from_model(c: &sim::mlu::Counters) -> Self {
        let t = |x: u64| x & 0xFFFF_FFFF;
        RtlCounters {
            loadmeta: t(c.loadmeta),
            memcheck_g: t(c.memcheck_g),
            memcheck_s: t(c.memcheck_s),
            range_lookups: t(c.range_lookups),
            range_hits: t(c.range_hits),
            range_misses: t(c.range_misses),
            loc_lookups: t(c.loc_lookups),
            loc_hits: t(c.loc_hits),
            loc_misses: t(c.loc_misses),
            steps: t(c.steps),
            meta_reads: t(c.meta_reads),
            faults: t(c.faults),
            invalidates: t(c.invalidates),
            flushes: t(c.flushes),
        }
    }
}

pub struct MluDriver<const N: usize, const IW: usize> {
    pub uut: Mlu<N, IW>,
    /// Cycles simulated since construction.
    pub cycle: u64,
    vcd: Option<VCDProbe<Box<dyn Write>>>,
    /// Timestamp unit of the VCD: one clock period.
    period: u64,
}

impl<const N: usize, const IW: usize> MluDriver<N, IW> {
    /// Wraps `uut`, applies one cycle of reset. With `vcd`, every signal is
    /// recorded at every clock edge (`period` time units per cycle).
    pub fn new(mut uut: Mlu<N, IW>, vcd: Option<Box<dyn Write>>) -> Self {
        uut.connect_all();
        let vcd = vcd.map(|w| {
            let v = write_vcd_header(w, &uut);
            write_vcd_dump(v, &uut)
        });
        let mut d = MluDriver { uut, cycle: 0, vcd, period: 10 };
        d.reset();
        d
    }

    fn settle(&mut self) {
        assert!(simulate(&mut self.uut, 500), "MLU did not settle (combinational loop?)");
    }

    fn stamp(&mut self, t: u64) {
        if let Some(mut v) = self.vcd.take() {
            v.timestamp(t).expect("VCD write");
            self.vcd = Some(write_vcd_change(v, &self.uut));
        }
    }

    /// The clock edge at the end of the current cycle.
    fn clock(&mut self) {
        self.uut.clock.next = true.into();
        self.settle();
        self.stamp(self.cycle * self.period + self.period / 2);
        self.uut.clock.next = false.into();
        self.settle();
        self.cycle += 1;
        self.stamp(self.cycle * self.period);
    }

    fn drive_mem(&mut self, port: Option<&mut MemPort>) -> Option<()> {
        let o = port.map(|p| p.outputs()).unwrap_or_default();
        self.uut.mem_req_ready.next = o.req_ready;
        self.uut.mem_resp_valid.next = o.resp_valid;
        self.uut.mem_resp_data.next = o.resp_data.into();
        self.uut.mem_resp_error.next = o.resp_error;
        Some(())
    }

    /// One cycle with the given memory (None: no memory attached; the MLU
    /// must then not read).
    fn cycle_with(&mut self, mut port: Option<&mut MemPort>) {
        self.drive_mem(port.as_deref_mut());
        self.settle();
        assert!(!self.uut.mlb_multi.val(), "MLB one-hot assertion failed (cycle {})", self.cycle);
        let (v, a) = (self.uut.mem_req_valid.val(), self.uut.mem_req_addr.val().to_u64());
        match port {
            Some(p) => p.edge(v, a),
            None => assert!(!v, "metadata read of {a:#x} with no memory attached"),
        }
        self.clock();
    }

    /// Synchronous reset for one cycle.
    pub fn reset(&mut self) {
        self.uut.reset.next = true;
        self.uut.req_valid.next = false;
        self.uut.csr_we.next = false;
        self.cycle_with(None);
        self.uut.reset.next = false;
        self.settle();
    }

    /// One CSR write (takes one cycle; the MLU must be idle or not: CSR
    /// writes are accepted in any cycle).
    pub fn csr_write(&mut self, addr: u64, data: u64) {
        self.uut.csr_we.next = true;
        self.uut.csr_addr.next = addr.into();
        self.uut.csr_data.next = data.into();
        self.cycle_with(None);
        self.uut.csr_we.next = false;
        self.settle();
    }

    fn drive_req(&mut self, r: &Request, valid: bool) {
        self.uut.req_valid.next = valid;
        self.uut.req_op.next = (r.op as u64).into();
        self.uut.req_ptr.next = r.ptr.into();
        self.uut.req_width.next = (r.width as u64).into();
        self.uut.req_loc.next = r.loc.into();
        self.uut.req_sbase.next = (r.sbase as u64).into();
        self.uut.req_ssize.next = (r.ssize as u64).into();
    }

    /// Issue `r`, wait for its response. `port` serves metadata reads.
    pub fn transact(&mut self, port: &mut MemPort, r: Request) -> Response {
        self.transact_then(port, r, None).0
    }

    /// Issue `r`; when `next` is given, present it (req_valid high) from the
    /// cycle after `r` was taken, so that it waits for `r` to finish, and
    /// return its response too.
    pub fn transact_then(&mut self, port: &mut MemPort, r: Request, next: Option<Request>) -> (Response, Option<Response>) {
        let first = self.run_one(port, r, next);
        let second = next.map(|n| self.run_one(port, n, None));
        (first, second)
    }

    /// Present `r` until taken; then clock until its response. With `hold`,
    /// that request is presented (req_valid high) from the cycle after `r` was
    /// taken: the blocking MLU must not take it before `r`'s response cycle.
    fn run_one(&mut self, port: &mut MemPort, r: Request, hold: Option<Request>) -> Response {
        let hold_next = hold.is_some();
        port.reads.clear();
        self.drive_req(&r, true);
        let mut waited = 0;
        loop {
            self.drive_mem(Some(port));
            self.settle();
            if self.uut.req_ready.val() {
                break;
            }
            self.cycle_with(Some(port));
            waited += 1;
            assert!(waited < 1_000_000, "request never taken");
        }
        // Taken at this edge.
        self.cycle_with(Some(port));
        let taken_at = self.cycle;
        match &hold {
            Some(h) => self.drive_req(h, true),
            None => self.drive_req(&Request::default(), false),
        }
        loop {
            self.drive_mem(Some(port));
            self.settle();
            if self.uut.resp_valid.val() {
                let u = &self.uut;
                let resp = Response {
                    op: u.resp_op.val().to_u64() as u8,
                    fault: u.resp_fault.val().to_u64() as u8,
                    loc: u.resp_loc.val().to_u64(),
                    addr: u.resp_addr.val().to_u64(),
                    base: u.resp_base.val().to_u64(),
                    size: u.resp_size.val().to_u64(),
                    cycles: self.cycle - taken_at + 1,
                    reads: std::mem::take(&mut port.reads),
                };
                assert!(port.idle(), "response with a metadata read outstanding");
                if hold_next {
                    // A held request (set by the caller next) may be taken in
                    // this very cycle; leave the clock to the next run_one.
                    return resp;
                }
                self.cycle_with(Some(port));
                self.settle();
                assert!(!self.uut.resp_valid.val(), "resp_valid longer than one cycle");
                return resp;
            }
            assert!(!self.uut.req_ready.val(), "req_ready while an operation is in flight");
            self.cycle_with(Some(port));
            assert!(self.cycle - taken_at < 5_000_000, "no response");
        }
    }

    /// Idle cycles (e.g. to let the waveform breathe).
    pub fn idle(&mut self, n: u64) {
        for _ in 0..n {
            self.cycle_with(None);
        }
    }

    pub fn counters(&self) -> RtlCounters {
        let u = &self.uut;
        RtlCounters {
            loadmeta: u.cnt_loadmeta.val().to_u64(),
            memcheck_g: u.cnt_memcheck_g.val().to_u64(),
            memcheck_s: u.cnt_memcheck_s.val().to_u64(),
            range_lookups: u.cnt_range_lookups.val().to_u64(),
            range_hits: u.cnt_range_hits.val().to_u64(),
            range_misses: u.cnt_range_misses.val().to_u64(),
            loc_lookups: u.cnt_loc_lookups.val().to_u64(),
            loc_hits: u.cnt_loc_hits.val().to_u64(),
            loc_misses: u.cnt_loc_misses.val().to_u64(),
            steps: u.cnt_steps.val().to_u64(),
            meta_reads: u.cnt_meta_reads.val().to_u64(),
            faults: u.cnt_faults.val().to_u64(),
            invalidates: u.cnt_invalidates.val().to_u64(),
            flushes: u.cnt_flushes.val().to_u64(),
        }
    }

    /// Flush the VCD writer (also done on drop).
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(v) = self.vcd.take() {
            drop(v);
        }
        Ok(())
    }
}
