// SPDX-License-Identifier: BSD-3-Clause
// walls' GPU code: the soft wall force in the framework's per-particle kernel, and the hard walls'
// bounces in the framework's per-particle loop.
#include "pardyn/external_potential_cuda.cuh"
#include "pardyn/for_each_cuda.cuh"
#include "walls.hpp"

PARDYN_EXTERNAL_POTENTIAL_CUDA(pardyn::potentials::SoftWalls)

PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<float, 2, false>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<float, 2, true>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<float, 3, false>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<float, 3, true>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<double, 2, false>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<double, 2, true>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<double, 3, false>)
PARDYN_FOR_EACH_CUDA(pardyn::potentials::WallBounce<double, 3, true>)
