// The parallel engines' store operations on the GPU: gathers and scatters of particles by index
// lists, ghost positions, displacement maxima and source blocks. Default stream throughout, like the
// rest of the CUDA backend, so that these kernels are ordered with the integrators' and the forces'.
#include <cuda_runtime.h>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"
#include "store_functors.hpp"
#include "store_ops.hpp"

// The GPU loops of store_functors.hpp's functors, for store_ops.cpp's for_each_index(Backend, ...).
PARDYN_STORE_FUNCTORS(PARDYN_FOR_EACH_CUDA)

namespace pardyn::parallel::gpu {
namespace {

constexpr int kThreads = 256;
inline int blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return int(b < 65535 * 16 ? (b == 0 ? 1 : b) : 65535 * 16);
}

// A device buffer that grows and is reused (one per purpose).
struct Buffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  void* get(std::size_t want) {
    if (want > bytes) {
      if (p) PARDYN_CUDA_CHECK(cudaFree(p));
      bytes = want + want / 4 + 256;
      PARDYN_CUDA_CHECK(cudaMalloc(&p, bytes));
    }
    return p;
  }
};
Buffer g_stage, g_stage2;

template <class Real, int Dim>
__global__ void displacement_kernel(ParticleView<Real, Dim> p, const Real* ref,
                                    PeriodicImage<Real> img, unsigned int* worst_bits) {
  float w = 0;
  const std::size_t n = p.n;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    Real d2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const Real dx = img.wrap(p.x[d][i] - ref[std::size_t(d) * n + i], d);
      d2 += dx * dx;
    }
    // Rounded up to a float, compared as unsigned bits (non-negative floats order like their bits);
    // a NaN becomes infinity.
    float f = float(d2);
    if (!(f == f)) f = INFINITY;
    w = fmaxf(w, f * 1.0000001f);
  }
  for (int o = 16; o; o >>= 1) w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
  if ((threadIdx.x & 31) == 0) atomicMax(worst_bits, __float_as_uint(w));
}

// Positions into the work store (unwrapped along cut periodic axes) and the largest squared
// displacement from ref, in one pass.
template <class Real, int Dim>
__global__ void copy_measure_kernel(ParticleView<Real, Dim> p, const Real* ref,
                                    PeriodicImage<Real> img, Unwrap unwrap, Real* w0, Real* w1,
                                    Real* w2, unsigned int* worst_bits) {
  float w = 0;
  const std::size_t n = p.n;
  Real* out[3] = {w0, w1, w2};
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    Real d2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const Real x = p.x[d][i];
      const Real dx = img.wrap(x - ref[std::size_t(d) * n + i], d);
      d2 += dx * dx;
      if (unwrap.period[d] > 0) {
        const double u = double(x) - unwrap.centre[d];
        out[d][i] = Real(unwrap.centre[d] + (u - unwrap.period[d] * rint(u / unwrap.period[d])));
      } else {
        out[d][i] = x;
      }
    }
    float f = float(d2);
    if (!(f == f)) f = INFINITY;
    w = fmaxf(w, f * 1.0000001f);
  }
  for (int o = 16; o; o >>= 1) w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
  if ((threadIdx.x & 31) == 0) atomicMax(worst_bits, __float_as_uint(w));
}

}  // namespace

void* stage(std::size_t bytes) { return g_stage.get(bytes); }

void free_device(void* p) { cudaFree(p); }

std::uint32_t* upload_index(std::uint32_t* dev, std::size_t& capacity,
                            const std::vector<std::uint32_t>& host) {
  if (host.size() > capacity || !dev) {
    if (dev) PARDYN_CUDA_CHECK(cudaFree(dev));
    capacity = host.size() + host.size() / 4 + 64;
    PARDYN_CUDA_CHECK(cudaMalloc(&dev, capacity * sizeof(std::uint32_t)));
  }
  if (!host.empty())
    PARDYN_CUDA_CHECK(
        cudaMemcpy(dev, host.data(), host.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  return dev;
}

namespace {
template <class Real, int Dim>
void launch_gather_pos(const ParticleView<Real, Dim>& p, const std::uint32_t* idx,
                       std::size_t count, const double* shift, Real* out) {
  fn::GatherPositions<Real, Dim> f{p, idx, count, {}, out};
  for (int d = 0; d < Dim; ++d) f.shift[d] = Real(shift[d]);
  cuda::for_each_index(count, f);
}
}  // namespace

double max_displacement2(const ParticleStore& s, const void* ref, const Box& box) {
  if (s.size() == 0) return 0;
  auto* bits = static_cast<unsigned int*>(g_stage2.get(sizeof(unsigned int)));
  PARDYN_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned int), 0));
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const int blocks = std::min(blocks_for(p.n), 1024);
    displacement_kernel<Real, Dim><<<blocks, kThreads>>>(p, static_cast<const Real*>(ref),
                                                         PeriodicImage<Real>::make(box), bits);
    PARDYN_CUDA_CHECK_LAUNCH("displacement_kernel");
  });
  unsigned int h = 0;
  PARDYN_CUDA_CHECK(cudaMemcpy(&h, bits, sizeof h, cudaMemcpyDeviceToHost));
  float f;
  std::memcpy(&f, &h, sizeof f);
  return double(f);
}

namespace {
template <class Real>
struct InSlab {
  const Real* x;
  Slab slab;
  int side;  // 0: below lo, 1: at or above hi
  __device__ bool operator()(std::uint32_t i) const {
    double u = double(x[i]) - slab.centre;
    if (slab.period > 0) u -= slab.period * rint(u / slab.period);
    return side == 0 ? u < slab.lo : u >= slab.hi;
  }
};
}  // namespace

void select_slab(const ParticleStore& s, std::size_t begin, std::size_t end, const Slab& slab,
                 std::uint32_t* lo, std::uint32_t* hi, std::size_t& n_lo, std::size_t& n_hi) {
  n_lo = n_hi = 0;
  if (end <= begin) return;
  // cub's selection with temporary storage kept between calls (no allocation per call), both
  // counts fetched with one copy.
  static Buffer temp, counts;
  auto* cnt = static_cast<unsigned long long*>(counts.get(2 * sizeof(unsigned long long)));
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    const thrust::counting_iterator<std::uint32_t> first{std::uint32_t(begin)};
    const long long n = (long long)(end - begin);
    for (int side = 0; side < 2; ++side) {
      const InSlab<Real> pred{p.x[slab.axis], slab, side};
      std::size_t bytes = 0;
      PARDYN_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, side ? hi : lo, cnt + side, n,
                                              pred, cudaStream_t(0)));
      void* t = temp.get(bytes);
      PARDYN_CUDA_CHECK(cub::DeviceSelect::If(t, bytes, first, side ? hi : lo, cnt + side, n, pred,
                                              cudaStream_t(0)));
    }
  });
  unsigned long long h[2] = {0, 0};
  PARDYN_CUDA_CHECK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
  n_lo = std::size_t(h[0]);
  n_hi = std::size_t(h[1]);
}

void download(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void* pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  PARDYN_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
  return p;
}
void pinned_free(void* p) { cudaFreeHost(p); }
void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  PARDYN_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void copy_async(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, 0));
}
void sync() { PARDYN_CUDA_CHECK(cudaStreamSynchronize(0)); }

void pack_positions(const ParticleStore& from, const std::uint32_t* idx, std::size_t count,
                    const double* shift, void* out) {
  if (count == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    Real* o = static_cast<Real*>(out);
    launch_gather_pos<Real, Dim>(p, idx, count, shift, o);
  });
}

void pack_static(const ParticleStore& from, const std::uint32_t* idx, std::size_t count,
                 void* out) {
  if (count == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    char* o = static_cast<char*>(out);
    cuda::for_each_index(count, fn::GatherStatic<Real, Dim>{
                                    p, idx, reinterpret_cast<Real*>(o),
                                    reinterpret_cast<std::int32_t*>(o + count * sizeof(Real))});
  });
}

void unpack_static(ParticleStore& to, std::size_t offset, std::size_t count, const void* in) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    const char* i = static_cast<const char*>(in);
    PARDYN_CUDA_CHECK(
        cudaMemcpyAsync(p.mass + offset, i, count * sizeof(Real), cudaMemcpyDefault, 0));
    PARDYN_CUDA_CHECK(cudaMemcpyAsync(p.type + offset, i + count * sizeof(Real), count * 4,
                                      cudaMemcpyDefault, 0));
    cuda::for_each_index(count, fn::ClearIds{p.id + offset});
  });
}

void unpack_positions(ParticleStore& to, std::size_t offset, std::size_t count, const void* in) {
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const Real* src = static_cast<const Real*>(in);
    for (int d = 0; d < Dim; ++d)
      PARDYN_CUDA_CHECK(cudaMemcpyAsync(p.x[d] + offset, src + std::size_t(d) * count,
                                        count * sizeof(Real), cudaMemcpyDefault, 0));
  });
}

double copy_and_measure(const ParticleStore& s, const void* ref, ParticleStore& work,
                        const Unwrap& unwrap, const Box& box) {
  if (s.size() == 0) return 0;
  auto* bits = static_cast<unsigned int*>(g_stage2.get(sizeof(unsigned int)));
  PARDYN_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned int), 0));
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const auto q = work.view<Real, Dim>();
    const int blocks = std::min(blocks_for(p.n), 2048);
    copy_measure_kernel<Real, Dim>
        <<<blocks, kThreads>>>(p, static_cast<const Real*>(ref), PeriodicImage<Real>::make(box),
                               unwrap, q.x[0], q.x[1], Dim == 3 ? q.x[Dim - 1] : nullptr, bits);
    PARDYN_CUDA_CHECK_LAUNCH("copy_measure_kernel");
  });
  unsigned int h = 0;
  PARDYN_CUDA_CHECK(cudaMemcpy(&h, bits, sizeof h, cudaMemcpyDeviceToHost));
  float f;
  std::memcpy(&f, &h, sizeof f);
  return double(f);
}

}  // namespace pardyn::parallel::gpu
