// mlb8_rr: the Verilog of top mlb8_rr, paths from the repository root.
verilog_out/mlb8_rr.v
