//! `MemModel<Q, QW, WW>`: the SM pipeline's fixed-latency memory (no
//! caches), a delay line behind the one memory port: a data request is
//! answered `data_latency` cycles after the edge that took it, a metadata
//! read `meta_latency` cycles after (`sim::pipeline`'s memory rule). For
//! validation, not synthesis: the latencies are inputs, and the metadata
//! word comes from the testbench at request time.
//!
//! # Ports (one clock, rising edge)
//! - `reset`: synchronous; drops every request in flight.
//! - `data_latency`, `meta_latency` (32): cycles, >= 1, held constant while
//!   requests are in flight.
//! - Data request (the load/store unit): `data_req` with `data_warp` (WW) and
//!   `data_load` (a load wakes its warp; a store only occupies a slot). Taken
//!   at the edge where `data_req` is high; at most Q in flight (the caller
//!   bounds it by `data_count`). Data loads return no data (the pipeline
//!   times them, it does not compute).
//! - Data response: `data_resp` in the cycle the answer is due, with
//!   `data_resp_warp`, `data_resp_load`; in request order (fixed latency).
//!   `data_count` (8): requests in flight, including the one answered in
//!   this cycle.
//! - Metadata read (the MLU's 8-byte reads, one outstanding): `meta_req`,
//!   `meta_addr` (64) out to the testbench as `meta_word_addr`, which drives
//!   `meta_word` (64) and `meta_error` in the same cycle (the runtime's
//!   memory at request time). Answered on `meta_resp`, `meta_resp_data`,
//!   `meta_resp_error`, always accepted (as `hw::traverser`'s port).
//! - The caller arbitrates the single port: at most one of `data_req` and
//!   `meta_req` per cycle.
//!
//! Time is a free-running 32-bit cycle counter; a request records its due
//! cycle (`now + latency`, wrapping) and is answered when `now` equals it.
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MemModel<const Q: usize, const QW: usize, const WW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub data_latency: Signal<In, Bits<32>>,
    pub meta_latency: Signal<In, Bits<32>>,
    pub data_req: Signal<In, Bit>,
    pub data_warp: Signal<In, Bits<WW>>,
    pub data_load: Signal<In, Bit>,
    pub data_resp: Signal<Out, Bit>,
    pub data_resp_warp: Signal<Out, Bits<WW>>,
    pub data_resp_load: Signal<Out, Bit>,
    pub data_count: Signal<Out, Bits<8>>,
    pub meta_req: Signal<In, Bit>,
    pub meta_addr: Signal<In, Bits<64>>,
    pub meta_word_addr: Signal<Out, Bits<64>>,
    pub meta_word: Signal<In, Bits<64>>,
    pub meta_error: Signal<In, Bit>,
    pub meta_resp: Signal<Out, Bit>,
    pub meta_resp_data: Signal<Out, Bits<64>>,
    pub meta_resp_error: Signal<Out, Bit>,
    now: DFF<Bits<32>>,
    // Data delay line: a ring of Q (due, warp, load) entries.
    due: [DFF<Bits<32>>; Q],
    warp: [DFF<Bits<WW>>; Q],
    load: [DFF<Bit>; Q],
    head: DFF<Bits<QW>>,
    tail: DFF<Bits<QW>>,
    count: DFF<Bits<8>>,
    // The one metadata read in flight.
    m_valid: DFF<Bit>,
    m_due: DFF<Bits<32>>,
    m_data: DFF<Bits<64>>,
    m_error: DFF<Bit>,
    head_due: Signal<Local, Bits<32>>,
    head_warp: Signal<Local, Bits<WW>>,
    head_load: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    lat32: Signal<Local, Bits<32>>,
    mlat32: Signal<Local, Bits<32>>,
    slot: [Constant<Bits<QW>>; Q],
    one_qw: Constant<Bits<QW>>,
    one8: Constant<Bits<8>>,
    one32: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
    zero_qw: Constant<Bits<QW>>,
}

impl<const Q: usize, const QW: usize, const WW: usize> Default for MemModel<Q, QW, WW> {
    fn default() -> Self {
        assert!(Q >= 2 && Q == 1 << QW && Q <= 128, "MemModel<{Q}, {QW}>: Q must be 2^QW, at most 128");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            data_latency: Default::default(),
            meta_latency: Default::default(),
            data_req: Default::default(),
            data_warp: Default::default(),
            data_load: Default::default(),
            data_resp: Default::default(),
            data_resp_warp: Default::default(),
            data_resp_load: Default::default(),
            data_count: Default::default(),
            meta_req: Default::default(),
            meta_addr: Default::default(),
            meta_word_addr: Default::default(),
            meta_word: Default::default(),
            meta_error: Default::default(),
            meta_resp: Default::default(),
            meta_resp_data: Default::default(),
            meta_resp_error: Default::default(),
            now: Default::default(),
            due: std::array::from_fn(|_| Default::default()),
            warp: std::array::from_fn(|_| Default::default()),
            load: std::array::from_fn(|_| Default::default()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            m_valid: Default::default(),
            m_due: Default::default(),
            m_data: Default::default(),
            m_error: Default::default(),
            head_due: Default::default(),
            head_warp: Default::default(),
            head_load: Default::default(),
            pop: Default::default(),
            lat32: Default::default(),
            mlat32: Default::default(),
            slot: std::array::from_fn(|i| Constant::new(bits::<QW>(i as u64))),
            one_qw: Constant::new(bits::<QW>(1)),
            one8: Constant::new(bits::<8>(1)),
            one32: Constant::new(bits::<32>(1)),
            zero8: Constant::new(bits::<8>(0)),
            zero_qw: Constant::new(bits::<QW>(0)),
        }
    }
}

impl<const Q: usize, const QW: usize, const WW: usize> Logic for MemModel<Q, QW, WW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, now, head, tail, count, m_valid, m_due, m_data, m_error);
        for i in 0..Q {
            self.due[i].clock.next = self.clock.val();
            self.warp[i].clock.next = self.clock.val();
            self.load[i].clock.next = self.clock.val();
            self.due[i].d.next = self.due[i].q.val();
            self.warp[i].d.next = self.warp[i].q.val();
            self.load[i].d.next = self.load[i].q.val();
        }
        self.now.d.next = self.now.q.val() + self.one32.val();
        self.lat32.next = self.data_latency.val();
        self.mlat32.next = self.meta_latency.val();
        // The oldest data request.
        self.head_due.next = self.due[0].q.val();
        self.head_warp.next = self.warp[0].q.val();
        self.head_load.next = self.load[0].q.val();
        for i in 0..Q {
            if self.head.q.val() == self.slot[i].val() {
                self.head_due.next = self.due[i].q.val();
                self.head_warp.next = self.warp[i].q.val();
                self.head_load.next = self.load[i].q.val();
            }
        }
        self.pop.next = (self.count.q.val() != self.zero8.val()) & (self.head_due.val() == self.now.q.val());
        self.data_resp.next = self.pop.val();
        self.data_resp_warp.next = self.head_warp.val();
        self.data_resp_load.next = self.head_load.val();
        self.data_count.next = self.count.q.val();
        if self.pop.val() {
            self.head.d.next = self.head.q.val() + self.one_qw.val();
        }
        if self.data_req.val() {
            for i in 0..Q {
                if self.tail.q.val() == self.slot[i].val() {
                    self.due[i].d.next = self.now.q.val() + self.lat32.val();
                    self.warp[i].d.next = self.data_warp.val();
                    self.load[i].d.next = self.data_load.val();
                }
            }
            self.tail.d.next = self.tail.q.val() + self.one_qw.val();
        }
        if self.data_req.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + self.one8.val();
        }
        if !self.data_req.val() & self.pop.val() {
            self.count.d.next = self.count.q.val() - self.one8.val();
        }
        // Metadata: one read in flight; the word is taken at request time.
        self.meta_word_addr.next = self.meta_addr.val();
        self.meta_resp.next = self.m_valid.q.val() & (self.m_due.q.val() == self.now.q.val());
        self.meta_resp_data.next = self.m_data.q.val();
        self.meta_resp_error.next = self.m_error.q.val();
        if self.meta_resp.val() {
            self.m_valid.d.next = false;
        }
        if self.meta_req.val() {
            self.m_valid.d.next = true;
            self.m_due.d.next = self.now.q.val() + self.mlat32.val();
            self.m_data.d.next = self.meta_word.val();
            self.m_error.d.next = self.meta_error.val();
        }
        if self.reset.val() {
            self.count.d.next = self.zero8.val();
            self.head.d.next = self.zero_qw.val();
            self.tail.d.next = self.zero_qw.val();
            self.m_valid.d.next = false;
        }
    }
}
