// SPDX-License-Identifier: BSD-3-Clause
// soft_gas's GPU code: the framework's CUDA traversals instantiated for the same evaluator.
#include "pardyn/pair_potential_cuda.cuh"
#include "soft_gas.hpp"

PARDYN_PAIR_POTENTIAL_CUDA(pardyn::potentials::SoftGas)
