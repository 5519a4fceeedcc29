// SPDX-License-Identifier: BSD-3-Clause
// The rdf pair count on the GPU: one thread per sorted slot walks the 3^dim cells around its cell
// and counts each pair once (partners in higher slots) into its type pair's histogram. A block
// keeps a sub-histogram in shared memory when it fits (48 KiB: bins x type pairs <= 12288) and
// adds it to the global one at the end, else it adds to the global histogram directly. Only the
// histogram crosses to the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "../common/device_buffer.cuh"
#include "pardyn/cuda_check.hpp"
#include "rdf.hpp"

namespace pardyn::plugins::rdf {

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kSharedEntries = 12288;  // 48 KiB of 32-bit counts

template <int Dim, class Real, bool Shared>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const CellList cl, const PeriodicImage<Real> img, const Real rmax2,
                 const Real inv_dr, const int bins, const int types,
                 unsigned long long* __restrict__ hist) {
  extern __shared__ unsigned int sub[];
  const int total = bins * (types * (types + 1) / 2);
  if (Shared) {
    for (int i = threadIdx.x; i < total; i += blockDim.x) sub[i] = 0;
    __syncthreads();
  }
  const CellParticle<Real>* __restrict__ pos = cl.positions<Real>();
  const std::int32_t* __restrict__ type = cl.type;
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < cl.n;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const CellParticle<Real> xi = pos[k];
    const int ti = type[k];
    int c[3];
    cl.cell_coords_at<Dim>(xi.c, c);
    count_partners<Dim>(cl, std::uint32_t(k), xi, ti, stencil_around<Dim>(cl, c, 1), img, rmax2,
                        inv_dr, bins, types, [&](int e) PARDYN_INLINE_LAMBDA {
                          if (Shared) atomicAdd(&sub[e], 1u);
                          else atomicAdd(&hist[e], 1ull);
                        });
  }
  if (Shared) {
    __syncthreads();
    for (int i = threadIdx.x; i < total; i += blockDim.x)
      if (sub[i]) atomicAdd(&hist[i], (unsigned long long)sub[i]);
  }
}

template <int Dim, class Real>
void launch(const CellList& cl, const Box& box, const CountSetup& s, unsigned long long* hist) {
  const std::size_t total = std::size_t(s.columns()) * std::size_t(s.bins);
  const int blocks = int(std::min<std::size_t>((cl.n + kThreads - 1) / kThreads, 4096));
  const PeriodicImage<Real> img = PeriodicImage<Real>::make(box);
  const Real rmax2 = Real(s.r_max * s.r_max), inv_dr = Real(double(s.bins) / s.r_max);
  if (total <= kSharedEntries) {
    count_kernel<Dim, Real, true><<<blocks, kThreads, total * sizeof(unsigned int)>>>(
        cl, img, rmax2, inv_dr, s.bins, s.types, hist);
    PARDYN_CUDA_CHECK_LAUNCH("rdf count_kernel (shared histogram)");
  } else {
    count_kernel<Dim, Real, false>
        <<<blocks, kThreads>>>(cl, img, rmax2, inv_dr, s.bins, s.types, hist);
    PARDYN_CUDA_CHECK_LAUNCH("rdf count_kernel (global histogram)");
  }
}

class CudaCounter final : public PairCounter {
 public:
  void count(const CellList& cl, const Box& box, Precision precision, const CountSetup& s,
             std::vector<std::uint64_t>& hist) override {
    const std::size_t total = std::size_t(s.columns()) * std::size_t(s.bins);
    if (cl.n < 2 || total == 0) return;
    unsigned long long* d = hist_.get(total);
    PARDYN_CUDA_CHECK(cudaMemset(d, 0, total * sizeof(unsigned long long)));
    if (cl.dim == 2) {
      if (precision == Precision::Float) launch<2, float>(cl, box, s, d);
      else launch<2, double>(cl, box, s, d);
    } else {
      if (precision == Precision::Float) launch<3, float>(cl, box, s, d);
      else launch<3, double>(cl, box, s, d);
    }
    host_.resize(total);
    PARDYN_CUDA_CHECK(
        cudaMemcpy(host_.data(), d, total * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < total; ++i) hist[i] += host_[i];
  }

 private:
  DeviceBuffer<unsigned long long> hist_;
  std::vector<unsigned long long> host_;
};

}  // namespace

std::unique_ptr<PairCounter> make_cuda_counter() { return std::make_unique<CudaCounter>(); }

}  // namespace pardyn::plugins::rdf
