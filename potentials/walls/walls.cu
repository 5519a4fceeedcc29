// walls' GPU code: the soft wall force in the framework's per-particle kernel.
#include "pardyn/external_potential_cuda.cuh"
#include "walls.hpp"

PARDYN_EXTERNAL_POTENTIAL_CUDA(pardyn::potentials::SoftWalls)
