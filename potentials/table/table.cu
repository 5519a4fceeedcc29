// SPDX-License-Identifier: BSD-3-Clause
// table's GPU code: the framework's CUDA traversals instantiated for its evaluator (table.cpp hands
// them the parameters with the device copy of the data).
#include "pardyn/pair_potential_cuda.cuh"
#include "table.hpp"

PARDYN_PAIR_POTENTIAL_CUDA(pardyn::potentials::Table)
