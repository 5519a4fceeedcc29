// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of ExternalPotential<Law>: include from the plugin's .cu file and end it with
// PARDYN_EXTERNAL_POTENTIAL_CUDA(Law). The same evaluator as on the CPU, one thread per particle.
#pragma once

#if !defined(__CUDACC__)
#error "external_potential_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

#include <cuda_runtime.h>

#include <algorithm>

#include "pardyn/cuda.hpp"
#include "pardyn/cuda_check.hpp"
#include "pardyn/external_potential.hpp"

namespace pardyn::cuda {

namespace detail {
template <bool Energy, class Eval, class View>
__global__ void external_kernel(const Eval ev, const View p) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += std::size_t(gridDim.x) * blockDim.x)
    external_one<Energy>(ev, p, i);
}
}  // namespace detail

template <class Law>
void external_compute(const typename Law::Params& params, ParticleStore& s,
                      const ForceRequest& req) {
  if (s.size() == 0) return;
  visit(s, [&](auto view) {
    using View = decltype(view);
    const typename Law::template Evaluator<typename View::real> ev(params, *req.box, View::dim);
    constexpr int threads = 256;
    // A few waves of blocks per multiprocessor; the grid-stride loop covers the rest.
    static const int sms = std::max(1, device_info().multiprocessors);  // read once (~0.5 ms)
    const std::size_t want = (view.n + threads - 1) / threads;
    const int blocks = int(std::min<std::size_t>(want, std::size_t(sms) * 8));
    if (req.energy || req.virial) detail::external_kernel<true><<<blocks, threads>>>(ev, view);
    else detail::external_kernel<false><<<blocks, threads>>>(ev, view);
    PARDYN_CUDA_CHECK_LAUNCH("external_kernel");
  });
}

}  // namespace pardyn::cuda

#define PARDYN_EXTERNAL_POTENTIAL_CUDA(Law)          \
  template void pardyn::cuda::external_compute<Law>( \
      const typename Law::Params&, pardyn::ParticleStore&, const pardyn::ForceRequest&);
