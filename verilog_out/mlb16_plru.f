// mlb16_plru: the Verilog of top mlb16_plru, paths from the repository root.
verilog_out/mlb16_plru.v
