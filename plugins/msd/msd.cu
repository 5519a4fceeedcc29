// SPDX-License-Identifier: BSD-3-Clause
// The msd sums on the GPU: one pass over the particles, the reference positions (by id) in
// device memory. Each thread accumulates its particles' squared displacements in double, each
// block adds its threads' sums by a tree in shared memory into one partial per block, and a second
// one-block kernel adds the partials in block order: no atomics, so the same run gives the same
// sums to the last bit (a resumed run writes the very rows of the run it continues). Only those
// dim + types + 1 doubles are copied to the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "../common/device_buffer.cuh"
#include "msd.hpp"
#include "pardyn/cuda_check.hpp"

namespace pardyn::plugins::msd {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxSums = 3 + kMaxTypes + 1;

// Adds v over the block (a fixed tree); thread 0 gets the sum. `scratch`: kThreads doubles.
__device__ double block_sum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const double total = scratch[0];
  __syncthreads();  // scratch is reused by the next call
  return total;
}

// partial[block * m + k]: this block's sums (m = Dim + types + 1, see Displacements::sums).
template <int Dim, class Real>
__global__ void __launch_bounds__(kThreads)
    sums_kernel(const ParticleView<Real, Dim> p, const double* __restrict__ ref,
                const std::size_t ids, const double L0, const double L1, const double L2,
                const int types, double* __restrict__ partial) {
  __shared__ double scratch[kThreads];
  const int m = Dim + types + 1;
  const double L[3] = {L0, L1, L2};
  double acc[kMaxSums];
  for (int k = 0; k < m; ++k) acc[k] = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < p.n;
       i += std::size_t(gridDim.x) * blockDim.x)
    add_displacement(p, i, ref, ids, L, types, acc);
  for (int k = 0; k < m; ++k) {
    const double v = block_sum(acc[k], scratch);
    if (threadIdx.x == 0) partial[std::size_t(blockIdx.x) * m + k] = v;
  }
}

// out[k] = sum over blocks of partial[b * m + k], in a fixed order.
__global__ void __launch_bounds__(kThreads)
    add_partials_kernel(const double* __restrict__ partial, const int blocks, const int m,
                        double* __restrict__ out) {
  __shared__ double scratch[kThreads];
  for (int k = 0; k < m; ++k) {
    double v = 0;
    for (int b = threadIdx.x; b < blocks; b += kThreads) v += partial[std::size_t(b) * m + k];
    const double total = block_sum(v, scratch);
    if (threadIdx.x == 0) out[k] = total;
  }
}

class CudaDisplacements final : public Displacements {
 public:
  void set_reference(const std::vector<double>& ref, int, std::size_t ids) override {
    double* d = ref_.get(ref.size());
    if (!ref.empty())
      PARDYN_CUDA_CHECK(
          cudaMemcpy(d, ref.data(), ref.size() * sizeof(double), cudaMemcpyHostToDevice));
    ids_ = ids;
  }

  void sums(const ParticleStore& s, const double L[3], int types, double* out) override {
    const int m = s.dim() + types + 1;
    const std::size_t n = s.size();
    const int blocks =
        int(std::max<std::size_t>(1, std::min<std::size_t>((n + kThreads - 1) / kThreads, 1024)));
    double* partial = partial_.get(std::size_t(blocks) * m);
    double* dout = out_.get(std::size_t(m));
    visit(s, [&](auto p) {
      using View = decltype(p);
      sums_kernel<View::dim, typename View::real>
          <<<blocks, kThreads>>>(p, ref_.data(), ids_, L[0], L[1], L[2], types, partial);
      PARDYN_CUDA_CHECK_LAUNCH("msd sums_kernel");
    });
    add_partials_kernel<<<1, kThreads>>>(partial, blocks, m, dout);
    PARDYN_CUDA_CHECK_LAUNCH("msd add_partials_kernel");
    PARDYN_CUDA_CHECK(
        cudaMemcpy(out, dout, std::size_t(m) * sizeof(double), cudaMemcpyDeviceToHost));
  }

 private:
  DeviceBuffer<double> ref_, partial_, out_;
  std::size_t ids_ = 0;
};

}  // namespace

std::unique_ptr<Displacements> make_cuda_displacements() {
  return std::make_unique<CudaDisplacements>();
}

}  // namespace pardyn::plugins::msd
