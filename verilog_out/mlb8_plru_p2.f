// mlb8_plru_p2: the Verilog of top mlb8_plru_p2, paths from the repository root.
verilog_out/mlb8_plru_p2.v
