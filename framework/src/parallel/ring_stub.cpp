// SPDX-License-Identifier: BSD-3-Clause
// The all-pairs ring's GPU backend in a build without CUDA: it says why it cannot run.
#include "backend/cuda_stub.hpp"
#include "ring.hpp"

namespace pardyn::parallel {
std::unique_ptr<RingBackend> make_cuda_ring_backend() {
  cuda::no_cuda("the all-pairs ring on the GPU");
}
}  // namespace pardyn::parallel
