# mlb32_plru: timing constraints for mlb32_plru.v (mlugen 0.1.0; regenerate with `mlugen generate --all`).
# Times in ns. Liberty files in ps (ASAP7) need `set_units -time ns` first
# where the tool has it (OpenSTA does), or every number x 1000.
#
# 2.0 GHz, the H200 SM clock class the MLU is designed for (spec section 6);
# synth/reports/ give the period each top reaches in each library.
create_clock -name clk -period 0.500 [get_ports clock]
# A neighbouring block's flip-flop and wiring: inputs arrive, and outputs
# are taken, 20% of the period from the clock edge.
set_input_delay 0.100 -clock clk [get_ports {reset rs_valid rs_addr ls_valid ls_loc fill_valid fill_loc fill_base fill_size fill_tag inv_valid inv_loc flush}]
set_output_delay 0.100 -clock clk [get_ports {rs_hit rs_way rs_loc rs_base rs_size rs_tag rs_multi ls_hit ls_way ls_base ls_size ls_tag ls_multi nx_base nx_size nx_tag victim fill_ok fill_present repl_state}]
# `reset` is synchronous (sampled by flip-flops like any other input), so it
# is timed with the inputs above: no false path.
