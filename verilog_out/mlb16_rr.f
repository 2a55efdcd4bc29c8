// mlb16_rr: the Verilog of top mlb16_rr, paths from the repository root.
verilog_out/mlb16_rr.v
