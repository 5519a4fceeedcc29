# SPDX-License-Identifier: BSD-3-Clause
# Cell-list benchmarks (docs/cell-list.md): whole simulation steps as a user runs them.
add_executable(bench_cell_list cell_list_steps.cpp)
# pardyn_internal: the framework's communicator (parallel/communicator.hpp).
# pardyn_laws: potentials/table/table_file.hpp, which writes the table of --law table.
target_link_libraries(bench_cell_list PRIVATE pardyn::app pardyn_internal pardyn_laws)
