# mlu8_list: timing constraints for mlu8_list.v (mlugen 0.1.0; regenerate with `mlugen generate --all`).
# Times in ns. Liberty files in ps (ASAP7) need `set_units -time ns` first
# where the tool has it (OpenSTA does), or every number x 1000.
#
# 2.0 GHz, the H200 SM clock class the MLU is designed for (spec section 6);
# synth/reports/ give the period each top reaches in each library.
create_clock -name clk -period 0.500 [get_ports clock]
# A neighbouring block's flip-flop and wiring: inputs arrive, and outputs
# are taken, 20% of the period from the clock edge.
set_input_delay 0.100 -clock clk [get_ports {reset req_valid req_op req_ptr req_width req_loc req_sbase req_ssize csr_we csr_addr csr_data mem_req_ready mem_resp_valid mem_resp_data mem_resp_error}]
set_output_delay 0.100 -clock clk [get_ports {req_ready resp_valid resp_op resp_fault resp_loc resp_addr resp_base resp_size csr_mode csr_structure csr_root csr_step_limit cnt_loadmeta cnt_memcheck_g cnt_memcheck_s cnt_range_lookups cnt_range_hits cnt_range_misses cnt_loc_lookups cnt_loc_hits cnt_loc_misses cnt_steps cnt_meta_reads cnt_faults cnt_invalidates cnt_flushes mem_req_valid mem_req_addr mlb_multi mlb_repl_state mlb_hit_way mlb_victim mlb_fill_ok trav_busy trav_steps check_pass}]
# `reset` is synchronous (sampled by flip-flops like any other input), so it
# is timed with the inputs above: no false path.
