// SPDX-License-Identifier: BSD-3-Clause
// The rdf pair count on the GPU: the framework's histogram kernel (reduce_cuda.cuh: a block's
// histogram in shared memory where it fits) for the functor of rdf.hpp by slots (CountPairs<Dim,
// Real, false>: one thread per sorted slot), for each dimension and precision. Only the histogram
// crosses to the host.
#include "pardyn/reduce_cuda.cuh"
#include "rdf.hpp"

namespace rdf_gpu = pardyn::plugins::rdf;

PARDYN_HISTOGRAM_CUDA(rdf_gpu::CountPairs<2, float, false>)
PARDYN_HISTOGRAM_CUDA(rdf_gpu::CountPairs<2, double, false>)
PARDYN_HISTOGRAM_CUDA(rdf_gpu::CountPairs<3, float, false>)
PARDYN_HISTOGRAM_CUDA(rdf_gpu::CountPairs<3, double, false>)
