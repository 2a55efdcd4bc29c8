// mlu8_bst_k4_l32: the Verilog of top mlu8_bst_k4_l32, paths from the repository root.
verilog_out/mlu8_bst_k4_l32.v
