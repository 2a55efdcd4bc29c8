# memcheck: timing constraints for memcheck.v (mlugen 0.1.0; regenerate with `mlugen generate --all`).
# Times in ns. Liberty files in ps (ASAP7) need `set_units -time ns` first
# where the tool has it (OpenSTA does), or every number x 1000.
#
# 2.0 GHz, the H200 SM clock class the MLU is designed for (spec section 6);
# synth/reports/ give the period each top reaches in each library.
# No clock port (a combinational block): a virtual clock times it between
# the registers that feed it and the ones it feeds.
create_clock -name clk -period 0.500
# A neighbouring block's flip-flop and wiring: inputs arrive, and outputs
# are taken, 20% of the period from the clock edge.
set_input_delay 0.100 -clock clk [get_ports {g_ptr g_width g_loc g_meta_valid g_meta_base g_meta_size g_meta_tag s_addr s_width s_base s_size}]
set_output_delay 0.100 -clock clk [get_ports {g_need_meta g_done g_fault g_addr g_pre g_bchk g_ok g_ge g_c1 g_c2 g_c3_hi_gt g_c3_hi_eq g_c3_lo_ge s_ok s_fault s_ge s_c1 s_c2 s_c3_hi_gt s_c3_hi_eq s_c3_lo_ge}]
