// mlu16_bst: the Verilog of top mlu16_bst, paths from the repository root.
verilog_out/mlu16_bst.v
