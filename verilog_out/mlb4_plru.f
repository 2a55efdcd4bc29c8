// mlb4_plru: the Verilog of top mlb4_plru, paths from the repository root.
verilog_out/mlb4_plru.v
