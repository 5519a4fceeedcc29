// SPDX-License-Identifier: BSD-3-Clause
// Which kernels the GPU traversals' host launchers start. The launchers (grid sizes, list builds,
// buffers) are written once and take a `Kernels` policy:
//   - BuiltinKernels (the default): nvcc's instantiation of the kernel template, in the plugin that
//     includes the traversal (a built-in law);
//   - a run-time policy (the expression plugin's, docs/formulas.md "On the GPU"): the same kernel
//     template compiled by NVRTC for a generated evaluator, found by its name expression.
// Each kernel template has a descriptor (e.g. detail::ClVerlet) that gives both: address() (nvcc's
// instantiation, taken only by BuiltinKernels) and name(eval) (the C++ name expression that NVRTC
// instantiates and lowers, for an evaluator type spelled `eval`). A descriptor's Group lists every
// kernel its launcher may start (names(eval, out)) and the header that defines them: what one
// run-time compile builds.
#pragma once

#if !defined(__CUDACC__)
#error "launch_cuda.cuh is for .cu files"
#endif

#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <vector>

#include "pardyn/cuda_check.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn::cuda {

// The spelling of template arguments in a kernel's name expression.
template <class Real>
const char* real_name() {
  return sizeof(Real) == sizeof(double) ? "double" : "float";
}
inline const char* bool_name(bool b) { return b ? "true" : "false"; }

// "&ns::kernel<a, b, ...>": a kernel's name expression from its template arguments.
inline std::string kernel_name(const char* kernel, const std::vector<std::string>& args) {
  std::string s = std::string("&") + kernel + "<";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ">";
}

// f(a, b) for the four pairs of std::bool_constant: every variant dispatch_variant may choose.
template <class F>
void dispatch_all_variants(F&& f) {
  dispatch_variant(false, false, f);
  dispatch_variant(false, true, f);
  dispatch_variant(true, false, f);
  dispatch_variant(true, true, f);
}

// nvcc's instantiation of the kernel. The argument types must be the kernel's parameter types
// exactly (cudaLaunchKernel passes their bytes untyped): checked here at compile time.
struct BuiltinKernels {
  template <class K, class... Args>
  const void* get() const {
    static_assert(std::is_same_v<decltype(K::address()), void (*)(Args...)>,
                  "a kernel launched with arguments of other types than its parameters");
    return reinterpret_cast<const void*>(K::address());
  }
};

// Starts kernel K of `ks` on grid x block with `args` (by value, as <<<>>> would pass them), and
// checks the launch (`name` in the message).
template <class K, class Kernels, class... Args>
void launch_kernel(const Kernels& ks, dim3 grid, dim3 block, const char* name,
                   const Args&... args) {
  const void* fn = ks.template get<K, Args...>();
  void* argv[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  const cudaError_t e = cudaLaunchKernel(fn, grid, block, argv, 0, nullptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: the failure is reported here
    detail::fail(e, (std::string("launch of ") + name).c_str(), __FILE__, __LINE__);
  }
}

}  // namespace pardyn::cuda
#endif  // !__CUDACC_RTC__
