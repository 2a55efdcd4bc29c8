// mlu8_bst: the Verilog of top mlu8_bst, paths from the repository root.
verilog_out/mlu8_bst.v
