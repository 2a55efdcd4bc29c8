// mlb32_plru: the Verilog of top mlb32_plru, paths from the repository root.
verilog_out/mlb32_plru.v
