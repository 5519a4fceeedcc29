// SPDX-License-Identifier: BSD-3-Clause
#include "test_sticky.hpp"

#include "pardyn/pair_potential_cuda.cuh"

PARDYN_PAIR_POTENTIAL_CUDA(TestSticky)
