# SPDX-License-Identifier: BSD-3-Clause
# bench_nvrtc (nvrtc_compile.cpp): the cost of compiling a formula law's GPU kernels at run time,
# with NVRTC alone or NVRTC + nvJitLink. Host code only: it builds wherever the toolkit has both
# libraries, and its --check (ctest nvrtc.cell_list_kernels) runs without a GPU.
if(PARDYN_HAVE_CUDA AND TARGET CUDA::nvrtc)
  find_library(PARDYN_NVJITLINK nvJitLink HINTS "${CUDAToolkit_LIBRARY_DIR}")
  if(PARDYN_NVJITLINK)
    add_executable(bench_nvrtc nvrtc_compile.cpp)
    target_link_libraries(bench_nvrtc PRIVATE CUDA::nvrtc "${PARDYN_NVJITLINK}")
    target_include_directories(bench_nvrtc PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    target_compile_definitions(bench_nvrtc PRIVATE
      PARDYN_RTC_INCLUDE="${PROJECT_SOURCE_DIR}/framework/include/pardyn/rtc"
      PARDYN_SOURCE_INCLUDE="${PROJECT_SOURCE_DIR}/framework/include"
      PARDYN_BUILD_INCLUDE="${PROJECT_BINARY_DIR}/include"
      PARDYN_EXPRESSION_INCLUDE="${PROJECT_SOURCE_DIR}/potentials/expression")
    find_path(PARDYN_CCCL_INCLUDE cuda/std/type_traits HINTS ${CUDAToolkit_INCLUDE_DIRS}
              PATH_SUFFIXES cccl NO_DEFAULT_PATH)
    if(PARDYN_CCCL_INCLUDE)
      target_compile_definitions(bench_nvrtc PRIVATE PARDYN_CCCL_INCLUDE="${PARDYN_CCCL_INCLUDE}")
    endif()
  endif()
endif()
if(TARGET bench_nvrtc)
  # Every traversal's kernels compile under NVRTC with the device-clean headers and pardyn/rtc (no GPU
  # needed): what a formula law compiled for the GPU at run time will build on.
  add_test(NAME nvrtc.traversal_kernels COMMAND bench_nvrtc --check)
  add_test(NAME nvrtc.traversal_kernels_2d_double
           COMMAND bench_nvrtc --check --dim 2 --precision double)
  set_tests_properties(nvrtc.traversal_kernels nvrtc.traversal_kernels_2d_double
                       PROPERTIES SKIP_RETURN_CODE 77)
endif()
# bench_formula_compile (formula_gpu_compile.cpp): a formula law's GPU kernels as the expression
# plugin compiles, caches and loads them (cold and cached), for docs/formulas.md "On the GPU".
if(TARGET pardyn_expression_law AND TARGET pardyn_jit_cuda)
  add_executable(bench_formula_compile formula_gpu_compile.cpp)
  target_link_libraries(bench_formula_compile PRIVATE pardyn::app pardyn_expression_law)
  add_dependencies(bench_formula_compile pardyn_plugin_expression)
endif()
