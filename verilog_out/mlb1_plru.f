// mlb1_plru: the Verilog of top mlb1_plru, paths from the repository root.
verilog_out/mlb1_plru.v
