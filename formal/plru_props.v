// plru_props: properties of the emitted tree pseudo-LRU, for every state.
// Used by testbench/tests/formal_plru.rs with `sat -seq 2 -prove-skip 1` and
// the registers' init values removed, so the first cycle's state is any of
// the 2^N values (the state register and the pending touches, which the
// PLRU applies a cycle late, are free).
//
// Macros: PLRU (the emitted module, e.g. mlb8_plru$plru$0), N (ways, a power
// of two >= 2), IW (index width, clog2(N)).
//
// Properties:
// - the victim equals an independent tree walk of the state (docs/design.md
//   "MLB": from the root go left on 0, right on 1; children of node i are
//   2i+1 and 2i+2; leaves are ways 0..N-1), hence always a valid index;
// - the next state equals an independent model of the update: clear gives
//   0, else touches a, b, c applied in that order, touch(w) setting every
//   node on w's path to point away from w (1 if w is in its left subtree);
//   a and b enter the PLRU as w's path (its nodes, and where it goes left,
//   with free bits off the path), c as w;
// - after a cycle whose touches end with way w (the last valid of a, b, c)
//   and no clear, the victim is not w (`ifdef ONLY_NOT_TOUCHED: this one
//   alone, so a mutant's failure can be attributed to it).
module plru_props(clock, clear, ta_v, ta_w, tb_v, tb_w, tc_v, tc_w, ta_junk, tb_junk);
    input wire          clock;
    input wire          clear;
    input wire          ta_v, tb_v, tc_v;
    input wire [`IW-1:0] ta_w, tb_w, tc_w;
    input wire [`N-1:0] ta_junk, tb_junk;

    wire [`IW-1:0] victim;
    wire [`N-1:0]  state;
    // Touches a and b enter as tree paths (the MLB packs them from its
    // encoders): the path's nodes, and where it goes left. The bits off the
    // path are free (ta_junk, tb_junk): the PLRU must ignore them.
    function [`N-1:0] path_nodes(input [`IW-1:0] w);
        integer level;
        reg [`IW:0] node, parent;
        begin
            path_nodes = 0;
            node = w + (`N - 1);
            for (level = 0; level < `IW; level = level + 1) begin
                parent = (node - 1) >> 1;
                path_nodes[parent] = 1'b1;
                node = parent;
            end
        end
    endfunction
    function [`N-1:0] path_left(input [`IW-1:0] w);
        integer level;
        reg [`IW:0] node, parent;
        begin
            path_left = 0;
            node = w + (`N - 1);
            for (level = 0; level < `IW; level = level + 1) begin
                parent = (node - 1) >> 1;
                path_left[parent] = node[0]; // odd heap index = left child
                node = parent;
            end
        end
    endfunction
    wire [`N-1:0] ta_mask = ta_v ? path_nodes(ta_w) : {`N{1'b0}};
    wire [`N-1:0] tb_mask = tb_v ? path_nodes(tb_w) : {`N{1'b0}};
    wire [`N-1:0] ta_set = (ta_v ? path_left(ta_w) : {`N{1'b0}}) | (ta_junk & ~ta_mask);
    wire [`N-1:0] tb_set = (tb_v ? path_left(tb_w) : {`N{1'b0}}) | (tb_junk & ~tb_mask);

    `PLRU uut(.clock(clock), .clear(clear),
              .touch_a_mask(ta_mask), .touch_a_set(ta_set),
              .touch_b_mask(tb_mask), .touch_b_set(tb_set),
              .touch_c_valid(tc_v), .touch_c_way(tc_w),
              .victim(victim), .state(state));

    // Reference victim: walk the heap from the root.
    // Heap indices fit in IW+1 bits (at most 2N-2).
    function [`IW-1:0] walk(input [`N-1:0] s);
        integer level;
        reg [`IW:0] node;
        begin
            node = 0;
            for (level = 0; level < `IW; level = level + 1)
                node = {node[`IW-1:0], 1'b1} + s[node];
            walk = node - (`N - 1);
        end
    endfunction

    // Reference touch.
    function [`N-1:0] touch(input [`N-1:0] s, input [`IW-1:0] w);
        integer level;
        reg [`IW:0] node, parent;
        begin
            touch = s;
            node = w + (`N - 1);
            for (level = 0; level < `IW; level = level + 1) begin
                parent = (node - 1) >> 1;
                touch[parent] = node[0]; // odd heap index = left child
                node = parent;
            end
        end
    endfunction

    wire [`N-1:0] after_a = ta_v ? touch(state, ta_w) : state;
    wire [`N-1:0] after_b = tb_v ? touch(after_a, tb_w) : after_a;
    wire [`N-1:0] after_c = tc_v ? touch(after_b, tc_w) : after_b;

    // Last cycle's expectation, and the way touched last, if any.
    reg [`N-1:0]   f_next = 0;
    reg            f_touched = 1'b0;
    reg [`IW-1:0]  f_way = 0;
    always @(posedge clock) begin
        f_next <= clear ? {`N{1'b0}} : after_c;
        f_touched <= !clear && (ta_v || tb_v || tc_v);
        f_way <= tc_v ? tc_w : (tb_v ? tb_w : ta_w);
    end

    always @(*) begin
`ifndef ONLY_NOT_TOUCHED
        assert(victim == walk(state));
        assert(state == f_next);
`endif
        if (f_touched) assert(victim != f_way);
    end
endmodule
