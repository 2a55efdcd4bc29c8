// walker_bound: termination bound of one emitted walker of the MLU as an SM
// unit under an adversarial metadata port. Used by
// testbench/tests/formal_walker.rs with `sat -seq` (bounded model check from
// the post-reset state).
//
// Macros (set by the test with read_verilog -D):
//   WALKER     the emitted module, e.g. mlu8_bst_k4_l32_p2_c2_walkers_0
//   MAX_LIMIT  largest step limit a walk is started with
//   LAT        a read is answered at most LAT cycles after its grant
//   RWAIT      a read is granted at most RWAIT cycles after it is asked for
//   BOUND      claimed bound: `done` comes at most BOUND cycles after `start`
//
// Environment (assumptions): one response per granted read, 1..LAT cycles
// later, none otherwise; a grant within RWAIT cycles of the request; the
// node words and the error bit free on every response, so the memory may
// hold anything (a cyclic list, a wrongly ordered tree, nodes rewritten
// while the walk reads them, errors); start only with offer; the key,
// root, structure, the heap window, the unit's classification of the key
// (start_heap), cancel and taken free otherwise (taken only once done). A heap lookup (a key in the window) reads one node a
// cycle after its start (HeapNode), so it ends within the bound of any
// MAX_LIMIT >= 2 (the checks here use 2 and 3).
// Property (assertion): every walk ends (`done`) at most BOUND cycles after
// its accepted start; BOUND = 1 + MAX_LIMIT * (LAT + RWAIT + 2).
module walker_bound(clock, reset, start, start_range, start_heap, start_a, start_node, root, limit, structure,
                    heap_mask, heap_dir, grant, resp_valid, resp_error, resp_base, resp_size_tag, resp_link0, resp_link1,
                    taken, cancel);
    input wire        clock;
    input wire        reset;
    input wire        start;
    input wire        start_range;
    input wire [63:0] start_a;
    input wire [50:0] start_node;
    input wire [63:0] root;
    input wire [15:0] limit;
    input wire        structure;
    input wire        start_heap;
    input wire [63:0] heap_mask;
    input wire [63:0] heap_dir;
    input wire        grant;
    input wire        resp_valid;
    input wire        resp_error;
    input wire [63:0] resp_base;
    input wire [63:0] resp_size_tag;
    input wire [63:0] resp_link0;
    input wire [63:0] resp_link1;
    input wire        taken;
    input wire        cancel;

    wire        req_valid, busy, in_flight, done, visit, cancelled, key_range;
    wire [50:0] req_node, location;
    wire [1:0]  result;
    wire [55:0] base, size;
    wire [7:0]  tag;
    wire [63:0] key;

    `WALKER uut(
        .clock(clock), .reset(reset), .start(start), .offer(start), .start_range(start_range), .start_heap(start_heap),
        .start_a(start_a), .start_node(start_node), .root(root), .limit(limit), .structure(structure),
        .heap_mask(heap_mask), .heap_dir(heap_dir),
        .grant(grant), .resp_valid(resp_valid), .resp_error(resp_error), .resp_base(resp_base),
        .resp_size_tag(resp_size_tag), .resp_link0(resp_link0), .resp_link1(resp_link1),
        .taken(taken), .cancel(cancel), .req_valid(req_valid), .req_node(req_node), .busy(busy),
        .in_flight(in_flight), .done(done), .visit(visit), .result(result), .location(location),
        .base(base), .size(size), .tag(tag), .cancelled(cancelled), .key_range(key_range), .key(key));

    // Port-side bookkeeping: a read outstanding, its age, the request's wait.
    reg        f_outst = 1'b0;
    reg [7:0]  f_age = 8'd0;
    reg [7:0]  f_wait = 8'd0;
    // The walk being timed: active from an accepted start to its done.
    reg        f_active = 1'b0;
    reg [15:0] f_cycles = 16'd0;
    wire       f_take  = req_valid && grant;
    wire       f_start = start && !busy && !reset;

    always @(posedge clock) begin
        if (reset) begin
            f_outst <= 1'b0;
            f_active <= 1'b0;
        end else begin
            if (f_take) f_outst <= 1'b1;
            else if (resp_valid) f_outst <= 1'b0;
            if (f_start) begin
                f_active <= 1'b1;
                f_cycles <= 16'd0;
            end else if (done) begin
                f_active <= 1'b0;
            end else if (f_active) begin
                f_cycles <= f_cycles + 16'd1;
            end
        end
        f_age  <= f_take ? 8'd0 : (f_outst ? f_age + 8'd1 : 8'd0);
        f_wait <= (req_valid && !grant) ? f_wait + 8'd1 : 8'd0;
    end

    always @(*) begin
        // The environment. reset only in the first cycle (the post-reset state).
        assume(!reset);
        if (f_start) assume(limit <= `MAX_LIMIT);
        if (!f_outst || f_take) assume(!resp_valid);
        if (f_outst && f_age + 8'd1 >= `LAT) assume(resp_valid);
        if (req_valid && f_wait >= `RWAIT) assume(grant);
        if (!req_valid) assume(!grant);
        if (taken) assume(done);
        // The property: f_cycles counts cycles after the start cycle, so done
        // at f_cycles + 1 == BOUND is the last allowed moment.
        if (f_active && !done) assert(f_cycles + 16'd1 < `BOUND);
    end
endmodule
