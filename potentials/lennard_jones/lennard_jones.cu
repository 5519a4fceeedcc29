// SPDX-License-Identifier: BSD-3-Clause
// lennard_jones's GPU code: the framework's CUDA traversals instantiated for the same evaluator.
#include "lennard_jones.hpp"
#include "pardyn/pair_potential_cuda.cuh"

PARDYN_PAIR_POTENTIAL_CUDA(pardyn::potentials::LennardJones)
