// mlu16_bst_hum: the Verilog of top mlu16_bst_hum, paths from the repository root.
verilog_out/mlu16_bst_hum.v
