// canary_alloc: the Verilog of top canary_alloc, paths from the repository root.
verilog_out/canary_alloc.v
