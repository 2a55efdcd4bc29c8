// mlb8_plru: the Verilog of top mlb8_plru, paths from the repository root.
verilog_out/mlb8_plru.v
