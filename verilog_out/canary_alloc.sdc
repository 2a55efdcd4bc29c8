# canary_alloc: timing constraints for canary_alloc.v (mlugen 0.1.0; regenerate with `mlugen generate --all`).
# Times in ns. Liberty files in ps (ASAP7) need `set_units -time ns` first
# where the tool has it (OpenSTA does), or every number x 1000.
#
# 2.0 GHz, the H200 SM clock class the MLU is designed for (spec section 6);
# synth/reports/ give the period each top reaches in each library.
create_clock -name clk -period 0.500 [get_ports clock]
# A neighbouring block's flip-flop and wiring: inputs arrive, and outputs
# are taken, 20% of the period from the clock edge.
set_input_delay 0.100 -clock clk [get_ports {reset key_we key_k0 key_k1 rate req_valid_0 req_valid_1 req_valid_2 req_valid_3 req_valid_4 req_valid_5 req_valid_6 req_valid_7 req_free_0 req_free_1 req_free_2 req_free_3 req_free_4 req_free_5 req_free_6 req_free_7 req_arg_0 req_arg_1 req_arg_2 req_arg_3 req_arg_4 req_arg_5 req_arg_6 req_arg_7 mem_rvalid mem_rdata dir_g}]
set_output_delay 0.100 -clock clk [get_ports {req_grant_0 req_grant_1 req_grant_2 req_grant_3 req_grant_4 req_grant_5 req_grant_6 req_grant_7 resp_valid resp_id resp_free resp_code resp_ptr resp_size resp_front resp_rear resp_new_page chk_done chk_chunk chk_front chk_rear mem_valid mem_we mem_addr mem_wdata dir_hit dir_chunk dir_size dir_tag}]
# `reset` is synchronous (sampled by flip-flops like any other input), so it
# is timed with the inputs above: no false path.
