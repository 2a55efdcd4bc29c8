// traverser_bound: termination bound of the emitted traverser under an
// adversarial metadata memory. Used by testbench/tests/formal_traverser.rs
// with `sat -seq` (bounded model check from the post-reset state).
//
// Macros (set by the test with read_verilog -D):
//   TRAVERSER  the emitted module, e.g. mlu8_bst$traverser
//   MAX_LIMIT  largest step limit the walk is started with
//   LAT        the memory answers at most LAT cycles after taking a request
//   RWAIT      the memory raises ready at most RWAIT cycles after a request appears
//   BOUND      claimed bound: `done` comes at most BOUND cycles after `start`
//
// Environment (assumptions): one response per request taken, 1..LAT cycles
// later, none otherwise; ready within RWAIT cycles; response data and error
// are free on every response, so the memory may hold anything (a cyclic
// list, a wrongly ordered tree, nodes rewritten while the walk reads them,
// error responses). Property (assertion): every walk ends (`done`) at most
// BOUND cycles after its accepted start; BOUND = 1 + 3 * MAX_LIMIT * (LAT + RWAIT + 1).
module traverser_bound(clock, reset, start, a, root, limit, structure,
                       mem_req_ready, mem_resp_valid, mem_resp_data, mem_resp_error);
    input wire        clock;
    input wire        reset;
    input wire        start;
    input wire [63:0] a;
    input wire [63:0] root;
    input wire [15:0] limit;
    input wire        structure;
    input wire        mem_req_ready;
    input wire        mem_resp_valid;
    input wire [63:0] mem_resp_data;
    input wire        mem_resp_error;

    wire        busy, done, visit, mem_req_valid;
    wire [1:0]  result;
    wire [15:0] steps;
    wire [63:0] location, mem_req_addr;
    wire [55:0] base, size;
    wire [7:0]  tag;

    `TRAVERSER uut(
        .clock(clock), .reset(reset), .start(start), .a(a), .root(root),
        .limit(limit), .structure(structure), .busy(busy), .done(done),
        .result(result), .steps(steps), .location(location), .base(base),
        .size(size), .tag(tag), .visit(visit), .mem_req_valid(mem_req_valid),
        .mem_req_ready(mem_req_ready), .mem_req_addr(mem_req_addr),
        .mem_resp_valid(mem_resp_valid), .mem_resp_data(mem_resp_data),
        .mem_resp_error(mem_resp_error));

    // Memory-side bookkeeping: a read outstanding, its age, the request's wait.
    reg        f_outst = 1'b0;
    reg [7:0]  f_age = 8'd0;
    reg [7:0]  f_wait = 8'd0;
    // The walk being timed: active from an accepted start to its done.
    reg        f_active = 1'b0;
    reg [15:0] f_cycles = 16'd0;
    wire       f_take  = mem_req_valid && mem_req_ready;
    wire       f_start = start && !busy && !reset;

    always @(posedge clock) begin
        if (reset) begin
            f_outst <= 1'b0;
            f_active <= 1'b0;
        end else begin
            if (f_take) f_outst <= 1'b1;
            else if (mem_resp_valid) f_outst <= 1'b0;
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
        f_wait <= (mem_req_valid && !mem_req_ready) ? f_wait + 8'd1 : 8'd0;
    end

    always @(*) begin
        // The environment. reset only in the first cycle (the post-reset state).
        assume(!reset);
        if (f_start) assume(limit <= `MAX_LIMIT);
        if (!f_outst || f_take) assume(!mem_resp_valid);
        if (f_outst && f_age + 8'd1 >= `LAT) assume(mem_resp_valid);
        if (mem_req_valid && f_wait >= `RWAIT) assume(mem_req_ready);
        // The property: f_cycles counts cycles after the start cycle, so done
        // at f_cycles + 1 == BOUND is the last allowed moment.
        if (f_active && !done) assert(f_cycles + 16'd1 < `BOUND);
    end
endmodule
