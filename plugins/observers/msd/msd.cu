// SPDX-License-Identifier: BSD-3-Clause
// The msd sums on the GPU: the framework's sum kernel (reduce_cuda.cuh: fixed-order merges, no
// atomics, so a run's sums repeat to the last bit) for the functor of msd.hpp, for each dimension
// and precision.
#include "msd.hpp"
#include "pardyn/reduce_cuda.cuh"

namespace msd_gpu = pardyn::plugins::msd;

PARDYN_SUM_CUDA(msd_gpu::Displacement<pardyn::ParticleView<float, 2>>)
PARDYN_SUM_CUDA(msd_gpu::Displacement<pardyn::ParticleView<double, 2>>)
PARDYN_SUM_CUDA(msd_gpu::Displacement<pardyn::ParticleView<float, 3>>)
PARDYN_SUM_CUDA(msd_gpu::Displacement<pardyn::ParticleView<double, 3>>)
