// mlb2_plru: the Verilog of top mlb2_plru, paths from the repository root.
verilog_out/mlb2_plru.v
