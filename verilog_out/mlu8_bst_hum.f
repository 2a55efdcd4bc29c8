// mlu8_bst_hum: the Verilog of top mlu8_bst_hum, paths from the repository root.
verilog_out/mlu8_bst_hum.v
