// memcheck_ref: an independent reference for the emitted `memcheck` block,
// written straight from docs/design.md "MEMCHECK.G (fault order, exactly)"
// and the MEMCHECK.S rule, with *widened* arithmetic (the RTL uses a
// widening-free form; the two must agree for every input). Same ports as
// verilog_out/memcheck.v so that `miter -equiv` can pair them. Used only by
// testbench/tests/formal_memcheck.rs; never synthesised.
module memcheck_ref(g_ptr, g_width, g_loc, g_meta_valid, g_meta_base, g_meta_size,
                    g_meta_tag, g_need_meta, g_done, g_fault, g_addr,
                    g_pre, g_bchk, g_ok, g_ge, g_c1, g_c2, g_c3_hi_gt, g_c3_hi_eq, g_c3_lo_ge,
                    s_addr, s_width, s_base, s_size, s_ok, s_fault,
                    s_ge, s_c1, s_c2, s_c3_hi_gt, s_c3_hi_eq, s_c3_lo_ge);
    input  wire [63:0] g_ptr;
    input  wire [4:0]  g_width;
    input  wire [63:0] g_loc;
    input  wire        g_meta_valid;
    input  wire [55:0] g_meta_base;
    input  wire [55:0] g_meta_size;
    input  wire [7:0]  g_meta_tag;
    output wire        g_need_meta;
    output wire        g_done;
    output wire [2:0]  g_fault;
    output wire [55:0] g_addr;
    output wire [2:0]  g_pre;
    output wire        g_bchk;
    output wire        g_ok;
    output wire        g_ge;
    output wire        g_c1;
    output wire        g_c2;
    output wire        g_c3_hi_gt;
    output wire        g_c3_hi_eq;
    output wire        g_c3_lo_ge;
    input  wire [31:0] s_addr;
    input  wire [4:0]  s_width;
    input  wire [31:0] s_base;
    input  wire [31:0] s_size;
    output wire        s_ok;
    output wire [2:0]  s_fault;
    output wire        s_ge;
    output wire        s_c1;
    output wire        s_c2;
    output wire        s_c3_hi_gt;
    output wire        s_c3_hi_eq;
    output wire        s_c3_lo_ge;

    // Fault codes (docs/design.md "Encodings").
    localparam [2:0] NONE = 3'd0, OUT_OF_BOUNDS = 3'd1, USE_AFTER_FREE = 3'd2,
                     TAG_MISMATCH = 3'd3, NO_META = 3'd4, SHARED_OOB = 3'd5;

    wire [7:0]  tag = g_ptr[63:56];
    wire [55:0] a   = g_ptr[55:0];
    // 64-bit sums: base + size < 2^57 and a + w < 2^57, so nothing wraps.
    wire [63:0] a_end   = {8'd0, a} + {59'd0, g_width};
    wire [63:0] obj_end = {8'd0, g_meta_base} + {8'd0, g_meta_size};
    wire        in_bounds = ({8'd0, g_meta_base} <= {8'd0, a}) && (a_end <= obj_end);

    wire no_loc = (g_loc == 64'd0) || (g_loc == 64'hFFFF_FFFF_FFFF_FFFF);
    assign g_need_meta = (tag != 8'd0) && !no_loc;
    assign g_done      = !g_need_meta || g_meta_valid;
    assign g_addr      = a;
    assign g_fault =
        (tag == 8'd0)            ? NONE :            // 1. unchecked pointer
        no_loc                   ? NO_META :         // 2. no metadata location
        !g_meta_valid            ? NONE :            // 3. metadata not here yet
        (g_meta_tag == 8'hFF)    ? USE_AFTER_FREE :  // 4. FREED
        (g_meta_tag != tag)      ? TAG_MISMATCH :    // 5.
        !in_bounds               ? OUT_OF_BOUNDS :   // 6.
                                   NONE;             // 7. pass

    // The split for the unit's lane checks: the fault with the bounds test
    // taken as passed, whether the bounds test decides, and the test alone.
    assign g_pre =
        (tag == 8'd0)            ? NONE :
        no_loc                   ? NO_META :
        !g_meta_valid            ? NONE :
        (g_meta_tag == 8'hFF)    ? USE_AFTER_FREE :
        (g_meta_tag != tag)      ? TAG_MISMATCH :
                                   NONE;
    assign g_bchk = (tag != 8'd0) && !no_loc && g_meta_valid &&
                    (g_meta_tag != 8'hFF) && (g_meta_tag == tag);
    assign g_ok   = in_bounds;

    // g_ok in parts (hw/src/in_bounds.rs): a >= base, and the carries of
    // T = base + size + ~a + ~w + 2 summed as two carry-save rows and a
    // final add, each carry taken out of bit 55. The rows are the parts'
    // definition.
    wire [55:0] na  = ~a;
    wire [55:0] nw  = ~{51'd0, g_width};
    wire [55:0] s1  = g_meta_base ^ g_meta_size ^ na;
    wire [55:0] c1v = (g_meta_base & g_meta_size) | (g_meta_base & na) | (g_meta_size & na);
    wire [55:0] c1s = {c1v[54:0], 1'b0};
    wire [55:0] s2  = s1 ^ c1s ^ nw;
    wire [55:0] c2v = (s1 & c1s) | (s1 & nw) | (c1s & nw);
    assign g_ge = {8'd0, g_meta_base} <= {8'd0, a};
    assign g_c1 = c1v[55];
    assign g_c2 = c2v[55];
    // The final carry, out of bit 55 of s2 + (c2 << 1) + 2, is s2 >= ~r with
    // r = (c2 << 1) | 1; given in halves (upper compare, upper equal, lower
    // compare). verif/src/vectors.rs checks the halves against the
    // widened sum.
    wire [55:0] nr  = ~{c2v[54:0], 1'b1};
    assign g_c3_hi_gt = s2[55:28] > nr[55:28];
    assign g_c3_hi_eq = s2[55:28] == nr[55:28];
    assign g_c3_lo_ge = s2[27:0] >= nr[27:0];

    wire [63:0] s_end   = {32'd0, s_addr} + {59'd0, s_width};
    wire [63:0] win_end = {32'd0, s_base} + {32'd0, s_size};
    assign s_ok    = (s_addr >= s_base) && (s_end <= win_end);
    assign s_fault = s_ok ? NONE : SHARED_OOB;

    // s_ok in parts, as g_ok's, on 32 bits.
    wire [31:0] sna = ~s_addr;
    wire [31:0] snw = ~{27'd0, s_width};
    wire [31:0] ss1 = s_base ^ s_size ^ sna;
    wire [31:0] sc1 = (s_base & s_size) | (s_base & sna) | (s_size & sna);
    wire [31:0] sc1s = {sc1[30:0], 1'b0};
    wire [31:0] ss2 = ss1 ^ sc1s ^ snw;
    wire [31:0] sc2 = (ss1 & sc1s) | (ss1 & snw) | (sc1s & snw);
    assign s_ge = s_addr >= s_base;
    assign s_c1 = sc1[31];
    assign s_c2 = sc2[31];
    wire [31:0] snr = ~{sc2[30:0], 1'b1};
    assign s_c3_hi_gt = ss2[31:16] > snr[31:16];
    assign s_c3_hi_eq = ss2[31:16] == snr[31:16];
    assign s_c3_lo_ge = ss2[15:0] >= snr[15:0];
endmodule
