// mlu8_bst_k4_l32_p2_c2: the Verilog of top mlu8_bst_k4_l32_p2_c2, paths from the repository root.
verilog_out/mlu8_bst_k4_l32_p2_c2.v
