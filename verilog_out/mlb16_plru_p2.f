// mlb16_plru_p2: the Verilog of top mlb16_plru_p2, paths from the repository root.
verilog_out/mlb16_plru_p2.v
