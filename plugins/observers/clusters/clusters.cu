// SPDX-License-Identifier: BSD-3-Clause
// The clusters analysis' GPU code: the framework's per-particle kernel for each functor of
// clusters_kernels.hpp (the host side runs them through for_each_index, clusters_finder.cpp).
#include "clusters_kernels.hpp"
#include "pardyn/for_each_cuda.cuh"

namespace clusters_gpu = pardyn::plugins::clusters;

PARDYN_FOR_EACH_CUDA(clusters_gpu::InitParents)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Flatten)
PARDYN_FOR_EACH_CUDA(clusters_gpu::CountSizes)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Select)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Fill<std::int32_t>)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Fill<std::int64_t>)
PARDYN_FOR_EACH_CUDA(clusters_gpu::ScatterIds)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Label)
PARDYN_FOR_EACH_CUDA(clusters_gpu::Records)

// The functors that read positions, for each dimension and precision.
#define CLUSTERS_TYPED(Dim, Real)                             \
  PARDYN_FOR_EACH_CUDA(clusters_gpu::Link<Dim, Real>)         \
  PARDYN_FOR_EACH_CUDA(clusters_gpu::Occupy<Dim, Real>)       \
  PARDYN_FOR_EACH_CUDA(clusters_gpu::MarkBoundary<Dim, Real>) \
  PARDYN_FOR_EACH_CUDA(clusters_gpu::LinkIncoming<Dim, Real>)
CLUSTERS_TYPED(2, float)
CLUSTERS_TYPED(2, double)
CLUSTERS_TYPED(3, float)
CLUSTERS_TYPED(3, double)
#undef CLUSTERS_TYPED
