// SPDX-License-Identifier: BSD-3-Clause
// The GPU loops of the tree exchange's functors (tree_let.hpp): the walks for the other ranks, the
// packing of their sources and the unpacking of what arrived run where the tree lives.
#include "pardyn/for_each_cuda.cuh"
#include "tree_let.hpp"

PARDYN_TREE_LET_FUNCTORS(PARDYN_FOR_EACH_CUDA)
