// SPDX-License-Identifier: BSD-3-Clause
// uniform_field's GPU code: the framework's per-particle kernel instantiated for the same
// evaluator.
#include "pardyn/external_potential_cuda.cuh"
#include "uniform_field.hpp"

PARDYN_EXTERNAL_POTENTIAL_CUDA(pardyn::potentials::UniformField)
