# SPDX-License-Identifier: BSD-3-Clause
# pardyn_add_plugin(NAME SOURCES src... [CUDA_SOURCES src.cu...] [LIBRARIES lib...])
#
# Inside pardyn's tree the plugin goes to <build>/lib/pardyn/plugins with the built-in ones. In a
# project of its own (find_package(pardyn)) it goes to that project's build folder, from where a
# scenario loads it through [simulation] plugin_paths or $PARDYN_PLUGIN_PATH.
#
# Builds one plugin: a shared library in <build>/lib/pardyn/plugins (installed to the same relative
# folder) that links the pardyn core and exports its descriptor (PARDYN_PLUGIN in the SDK). The pardyn
# executable never links a plugin: it finds and loads it at run time. CUDA_SOURCES are compiled only when
# the CUDA backend is enabled; the plugin records the architectures it was compiled for.
function(pardyn_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;CUDA_SOURCES;LIBRARIES" ${ARGN})
  set(target pardyn_plugin_${name})
  set(srcs ${P_SOURCES})
  if(PARDYN_HAVE_CUDA AND P_CUDA_SOURCES)
    list(APPEND srcs ${P_CUDA_SOURCES})
  endif()
  add_library(${target} MODULE ${srcs})
  target_link_libraries(${target} PRIVATE pardyn::core ${P_LIBRARIES})
  target_compile_definitions(${target} PRIVATE PARDYN_PLUGIN_NAME="${name}")
  if(PARDYN_HAVE_CUDA AND P_CUDA_SOURCES)
    # "80;90" would split the definition in two: the list is recorded with commas.
    string(REPLACE ";" "," _archs "${CMAKE_CUDA_ARCHITECTURES}")
    target_compile_definitions(${target} PRIVATE PARDYN_PLUGIN_HAS_CUDA=1
                               PARDYN_PLUGIN_CUDA_ARCHS="${_archs}")
  endif()
  if(DEFINED PARDYN_PLUGIN_SUBDIR)
    set(outdir "${PROJECT_BINARY_DIR}/${PARDYN_PLUGIN_SUBDIR}")
  else()
    set(outdir "${CMAKE_CURRENT_BINARY_DIR}/plugins")
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME "${name}"
    PREFIX "libpardyn_"
    LIBRARY_OUTPUT_DIRECTORY "${outdir}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED PARDYN_PLUGIN_SUBDIR)
    # lib/pardyn/plugins/x.so finds lib/libpardyn.so; outside the tree CMake's default build RPATH
    # points at the pardyn it was built against.
    set_target_properties(${target} PROPERTIES BUILD_RPATH "$ORIGIN/../.." INSTALL_RPATH "$ORIGIN/../..")
  endif()
  if(DEFINED PARDYN_PLUGIN_SUBDIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${PARDYN_PLUGIN_SUBDIR})
    # Every plugin must be built before the tests and the examples run.
    set_property(GLOBAL APPEND PROPERTY PARDYN_PLUGIN_TARGETS ${target})
  endif()
endfunction()
