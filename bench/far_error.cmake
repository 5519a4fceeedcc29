# SPDX-License-Identifier: BSD-3-Clause
# bench_far_error: the real gas's far field, cell_list pyramid against the tree, error and time
# (bench/far_error.cpp), through the plugins.
add_executable(bench_far_error "${CMAKE_CURRENT_LIST_DIR}/far_error.cpp")
target_link_libraries(bench_far_error PRIVATE pardyn::app pardyn_test_systems)
get_property(_far_plugins GLOBAL PROPERTY PARDYN_PLUGIN_TARGETS)
if(_far_plugins)
  add_dependencies(bench_far_error ${_far_plugins})
endif()
