# OpenSTA script rendered by `mlugen synth` from synth/templates/sta.tcl.
# {{ what }}
# Times are in the library's time unit ({{ time_unit }}).
read_liberty {{ lib }}
read_verilog {{ netlist }}
link_design {{ top }}
create_clock -name clk -period {{ period }} [get_ports {{ clock }}]
# Inputs come from flip-flops of the surrounding pipeline clocked by the same
# ideal clock and outputs go to flip-flops there: zero external delay, so
# every path (in->reg, reg->reg, reg->out, in->out) gets the whole period.
set data_inputs [delete_from_list [all_inputs] [get_ports {{ clock }}]]
set_input_delay 0 -clock clk $data_inputs
set_output_delay 0 -clock clk [all_outputs]
{% if !drive_cell.is_empty() %}# Each input is driven by an x1 buffer; each output drives a fanout of four.
set_driving_cell -lib_cell {{ drive_cell }} -pin {{ drive_pin }} $data_inputs
set_load {{ load }} [all_outputs]
{% endif %}{% if !icg_disable.is_empty() %}# Clock-gated netlist, power run only: the clock is not propagated through
# the ICG cells, so each gated clock net takes the toggle rate measured in
# the gate-level simulation (OpenSTA would otherwise give every clock net
# the full clock activity). Timing comes from the run without this.
{% endif %}{% for c in icg_disable %}set_disable_timing -from {{ icg_clk }} -to {{ icg_gclk }} [get_cells {{ "{" }}{{ c }}{{ "}" }}]
{% endfor %}{% if !activity.is_empty() %}# Workload activity (toggles per clock period, duty) of every input bit and
# flip-flop output pin, measured by gate-level simulation of this netlist.
# (`set_power_activity -pins` is broken in 2.0.17; the sta:: call works.)
set top [sta::top_instance]
{% endif %}{% for a in input_activity %}sta::set_power_pin_activity [$top find_pin {{ "{" }}{{ a.pin }}{{ "}" }}] {{ a.activity }} {{ a.duty }}
{% endfor %}{% for a in activity %}sta::set_power_pin_activity [sta::find_pin {{ "{" }}{{ a.pin }}{{ "}" }}] {{ a.activity }} {{ a.duty }}
{% endfor %}puts "MLUGEN-BEGIN-CHECKS"
report_checks -path_delay max -format full -digits 4
puts "MLUGEN-END-CHECKS"
puts "MLUGEN-BEGIN-POWER"
report_power -digits 6
puts "MLUGEN-END-POWER"
