// mlu8_list: the Verilog of top mlu8_list, paths from the repository root.
verilog_out/mlu8_list.v
