// memcheck: the Verilog of top memcheck, paths from the repository root.
verilog_out/memcheck.v
