// SPDX-License-Identifier: BSD-3-Clause
// log's GPU code: the framework's CUDA traversals instantiated for the same evaluator.
#include "log.hpp"

#include "pardyn/pair_potential_cuda.cuh"

PARDYN_PAIR_POTENTIAL_CUDA(pardyn::potentials::Log)
