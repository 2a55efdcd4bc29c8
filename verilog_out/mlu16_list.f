// mlu16_list: the Verilog of top mlu16_list, paths from the repository root.
verilog_out/mlu16_list.v
