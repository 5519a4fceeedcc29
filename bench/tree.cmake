# SPDX-License-Identifier: BSD-3-Clause
# bench_tree: accuracy and speed of the tree scheme (bench/tree_bench.cpp), through the plugins.
add_executable(bench_tree "${CMAKE_CURRENT_LIST_DIR}/tree_bench.cpp")
target_link_libraries(bench_tree PRIVATE pardyn::app pardyn_test_systems)
get_property(_tree_plugins GLOBAL PROPERTY PARDYN_PLUGIN_TARGETS)
if(_tree_plugins)
  add_dependencies(bench_tree ${_tree_plugins})
endif()
