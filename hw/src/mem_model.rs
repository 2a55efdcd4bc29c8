//! `MemModel<Q, QW, WW>`: the SM pipeline's fixed-latency memory (no
//! caches), a delay line behind the one memory port: a data request is
//! answered `data_latency` cycles after the edge that took it, a metadata
//! read `meta_latency` cycles after (`sim::sm_pipeline`'s memory rule). For
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
//! - Metadata read (the MLU unit's port, spec section 6: one 32-byte node
//!   per read, up to [`META_SLOTS`] in flight, each with the walker's id):
//!   `meta_req`, `meta_id` (3), `meta_node` (51: address bits 55..5) out to
//!   the testbench as `meta_node_req`/`meta_node_addr`, which drives the
//!   node's words `meta_base`, `meta_size_tag`, `meta_link0`, `meta_link1`
//!   and `meta_error` in the same cycle (the runtime's memory at request
//!   time). Answered `meta_latency` cycles later, in request order (fixed
//!   latency), on `meta_resp` with `meta_resp_id`, the four words and
//!   `meta_resp_error`, always accepted (the unit takes every response).
//! - The caller arbitrates the single port: at most one of `data_req` and
//!   `meta_req` per cycle.
//!
//! Time is a free-running 32-bit cycle counter; a request records its due
//! cycle (`now + latency`, wrapping) and is answered when `now` equals it.
use rust_hdl::prelude::*;

/// Metadata reads in flight at most: one per walker, K <= 8.
pub const META_SLOTS: usize = 8;

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
    pub meta_id: Signal<In, Bits<3>>,
    pub meta_node: Signal<In, Bits<51>>,
    pub meta_node_req: Signal<Out, Bit>,
    pub meta_node_addr: Signal<Out, Bits<51>>,
    pub meta_base: Signal<In, Bits<64>>,
    pub meta_size_tag: Signal<In, Bits<64>>,
    pub meta_link0: Signal<In, Bits<64>>,
    pub meta_link1: Signal<In, Bits<64>>,
    pub meta_error: Signal<In, Bit>,
    pub meta_resp: Signal<Out, Bit>,
    pub meta_resp_id: Signal<Out, Bits<3>>,
    pub meta_resp_base: Signal<Out, Bits<64>>,
    pub meta_resp_size_tag: Signal<Out, Bits<64>>,
    pub meta_resp_link0: Signal<Out, Bits<64>>,
    pub meta_resp_link1: Signal<Out, Bits<64>>,
    pub meta_resp_error: Signal<Out, Bit>,
    now: DFF<Bits<32>>,
    // Data delay line: a ring of Q (due, warp, load) entries.
    due: [DFF<Bits<32>>; Q],
    warp: [DFF<Bits<WW>>; Q],
    load: [DFF<Bit>; Q],
    head: DFF<Bits<QW>>,
    tail: DFF<Bits<QW>>,
    count: DFF<Bits<8>>,
    // Metadata delay line: a ring of META_SLOTS reads.
    m_due: [DFF<Bits<32>>; META_SLOTS],
    m_id: [DFF<Bits<3>>; META_SLOTS],
    m_base: [DFF<Bits<64>>; META_SLOTS],
    m_size_tag: [DFF<Bits<64>>; META_SLOTS],
    m_link0: [DFF<Bits<64>>; META_SLOTS],
    m_link1: [DFF<Bits<64>>; META_SLOTS],
    m_error: [DFF<Bit>; META_SLOTS],
    m_head: DFF<Bits<3>>,
    m_tail: DFF<Bits<3>>,
    m_count: DFF<Bits<4>>,
    m_pop: Signal<Local, Bit>,
    m_slot: [Constant<Bits<3>>; META_SLOTS],
    one3: Constant<Bits<3>>,
    one4: Constant<Bits<4>>,
    zero3: Constant<Bits<3>>,
    zero4: Constant<Bits<4>>,
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
            meta_id: Default::default(),
            meta_node: Default::default(),
            meta_node_req: Default::default(),
            meta_node_addr: Default::default(),
            meta_base: Default::default(),
            meta_size_tag: Default::default(),
            meta_link0: Default::default(),
            meta_link1: Default::default(),
            meta_error: Default::default(),
            meta_resp: Default::default(),
            meta_resp_id: Default::default(),
            meta_resp_base: Default::default(),
            meta_resp_size_tag: Default::default(),
            meta_resp_link0: Default::default(),
            meta_resp_link1: Default::default(),
            meta_resp_error: Default::default(),
            now: Default::default(),
            due: std::array::from_fn(|_| Default::default()),
            warp: std::array::from_fn(|_| Default::default()),
            load: std::array::from_fn(|_| Default::default()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            m_due: std::array::from_fn(|_| Default::default()),
            m_id: std::array::from_fn(|_| Default::default()),
            m_base: std::array::from_fn(|_| Default::default()),
            m_size_tag: std::array::from_fn(|_| Default::default()),
            m_link0: std::array::from_fn(|_| Default::default()),
            m_link1: std::array::from_fn(|_| Default::default()),
            m_error: std::array::from_fn(|_| Default::default()),
            m_head: Default::default(),
            m_tail: Default::default(),
            m_count: Default::default(),
            m_pop: Default::default(),
            m_slot: std::array::from_fn(|i| Constant::new(bits::<3>(i as u64))),
            one3: Constant::new(bits::<3>(1)),
            one4: Constant::new(bits::<4>(1)),
            zero3: Constant::new(bits::<3>(0)),
            zero4: Constant::new(bits::<4>(0)),
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
        dff_setup!(self, clock, now, head, tail, count, m_head, m_tail, m_count);
        for i in 0..META_SLOTS {
            self.m_due[i].clock.next = self.clock.val();
            self.m_id[i].clock.next = self.clock.val();
            self.m_base[i].clock.next = self.clock.val();
            self.m_size_tag[i].clock.next = self.clock.val();
            self.m_link0[i].clock.next = self.clock.val();
            self.m_link1[i].clock.next = self.clock.val();
            self.m_error[i].clock.next = self.clock.val();
            self.m_due[i].d.next = self.m_due[i].q.val();
            self.m_id[i].d.next = self.m_id[i].q.val();
            self.m_base[i].d.next = self.m_base[i].q.val();
            self.m_size_tag[i].d.next = self.m_size_tag[i].q.val();
            self.m_link0[i].d.next = self.m_link0[i].q.val();
            self.m_link1[i].d.next = self.m_link1[i].q.val();
            self.m_error[i].d.next = self.m_error[i].q.val();
        }
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
        // Metadata: a ring in request order; the node is taken at request
        // time, answered when its due cycle comes (at most one per cycle:
        // one request per cycle, one latency).
        self.meta_node_req.next = self.meta_req.val();
        self.meta_node_addr.next = self.meta_node.val();
        self.meta_resp_id.next = self.m_id[0].q.val();
        self.meta_resp_base.next = self.m_base[0].q.val();
        self.meta_resp_size_tag.next = self.m_size_tag[0].q.val();
        self.meta_resp_link0.next = self.m_link0[0].q.val();
        self.meta_resp_link1.next = self.m_link1[0].q.val();
        self.meta_resp_error.next = self.m_error[0].q.val();
        self.m_pop.next = false;
        for i in 0..META_SLOTS {
            if self.m_head.q.val() == self.m_slot[i].val() {
                self.m_pop.next =
                    (self.m_count.q.val() != self.zero4.val()) & (self.m_due[i].q.val() == self.now.q.val());
                self.meta_resp_id.next = self.m_id[i].q.val();
                self.meta_resp_base.next = self.m_base[i].q.val();
                self.meta_resp_size_tag.next = self.m_size_tag[i].q.val();
                self.meta_resp_link0.next = self.m_link0[i].q.val();
                self.meta_resp_link1.next = self.m_link1[i].q.val();
                self.meta_resp_error.next = self.m_error[i].q.val();
            }
        }
        self.meta_resp.next = self.m_pop.val();
        if self.m_pop.val() {
            self.m_head.d.next = self.m_head.q.val() + self.one3.val();
        }
        if self.meta_req.val() {
            for i in 0..META_SLOTS {
                if self.m_tail.q.val() == self.m_slot[i].val() {
                    self.m_due[i].d.next = self.now.q.val() + self.mlat32.val();
                    self.m_id[i].d.next = self.meta_id.val();
                    self.m_base[i].d.next = self.meta_base.val();
                    self.m_size_tag[i].d.next = self.meta_size_tag.val();
                    self.m_link0[i].d.next = self.meta_link0.val();
                    self.m_link1[i].d.next = self.meta_link1.val();
                    self.m_error[i].d.next = self.meta_error.val();
                }
            }
            self.m_tail.d.next = self.m_tail.q.val() + self.one3.val();
        }
        if self.meta_req.val() & !self.m_pop.val() {
            self.m_count.d.next = self.m_count.q.val() + self.one4.val();
        }
        if !self.meta_req.val() & self.m_pop.val() {
            self.m_count.d.next = self.m_count.q.val() - self.one4.val();
        }
        if self.reset.val() {
            self.count.d.next = self.zero8.val();
            self.head.d.next = self.zero_qw.val();
            self.tail.d.next = self.zero_qw.val();
            self.m_head.d.next = self.zero3.val();
            self.m_tail.d.next = self.zero3.val();
            self.m_count.d.next = self.zero4.val();
        }
    }
}
