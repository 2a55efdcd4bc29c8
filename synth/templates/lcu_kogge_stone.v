// Yosys techmap for `$lcu` (the carry chain behind every adder, subtractor
// and magnitude comparator after alumacc): a Kogge-Stone parallel-prefix
// carry network, log2(WIDTH) levels deep, instead of Yosys's default
// ripple chain. Used by synth.ys ahead of +/techmap.v, so the comparators
// of the MLB's range search are what a timing-driven flow would build.
// Follows the structure of Yosys's own techlibs/common/choices/kogge-stone.v
// (not shipped with Debian's Yosys 0.23).
(* techmap_celltype = "$lcu" *)
module _80_lcu_kogge_stone (P, G, CI, CO);
    parameter WIDTH = 2;
    (* force_downto *) input [WIDTH-1:0] P, G;
    input CI;
    (* force_downto *) output [WIDTH-1:0] CO;
    integer i, j;
    (* force_downto *) reg [WIDTH-1:0] p, g;
    always @* begin
        p = P;
        g = G;
        g[0] = g[0] | (p[0] & CI);
        for (i = 0; i < $clog2(WIDTH); i = i + 1) begin
            // Walk down so that level i reads level i-1's values.
            for (j = WIDTH - 1; j >= 2**i; j = j - 1) begin
                g[j] = g[j] | (p[j] & g[j - 2**i]);
                p[j] = p[j] & p[j - 2**i];
            end
        end
    end
    assign CO = g;
endmodule
