// SPDX-License-Identifier: BSD-3-Clause
// gravity's GPU code: the framework's CUDA traversals instantiated for the same evaluator.
#include "gravity.hpp"

#include "pardyn/pair_potential_cuda.cuh"

PARDYN_PAIR_POTENTIAL_CUDA(pardyn::potentials::Gravity)
