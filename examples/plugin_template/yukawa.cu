// SPDX-License-Identifier: BSD-3-Clause
// GPU code: the framework's CUDA traversals instantiated for the same evaluator. One line.
#include "yukawa.hpp"

#include "pardyn/pair_potential_cuda.cuh"

PARDYN_PAIR_POTENTIAL_CUDA(Yukawa)
