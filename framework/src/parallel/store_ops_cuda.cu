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
#include "store_ops.hpp"

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
__global__ void gather_records_kernel(ParticleView<Real, Dim> p, const std::uint32_t* idx,
                                      std::size_t count, char* out, std::size_t rb) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t i = idx[k];
    char* o = out + k * rb;
    Real r[2 * Dim + 1];
    for (int d = 0; d < Dim; ++d) r[d] = p.x[d][i], r[Dim + d] = p.v[d][i];
    r[2 * Dim] = p.mass[i];
    memcpy(o, r, sizeof r);
    const std::int32_t t = p.type[i];
    const std::int64_t id = p.id[i];
    memcpy(o + sizeof r, &t, 4);
    memcpy(o + sizeof r + 4, &id, 8);
    std::int32_t img[Dim];
    for (int d = 0; d < Dim; ++d) img[d] = p.image[d][i];
    memcpy(o + sizeof r + 12, img, sizeof img);
  }
}

template <class Real, int Dim>
__global__ void append_records_kernel(ParticleView<Real, Dim> p, std::size_t n0, std::size_t count,
                                      const char* in, std::size_t rb) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t i = n0 + k;
    const char* r0 = in + k * rb;
    Real r[2 * Dim + 1];
    memcpy(r, r0, sizeof r);
    std::int32_t t;
    std::int64_t id;
    memcpy(&t, r0 + sizeof r, 4);
    memcpy(&id, r0 + sizeof r + 4, 8);
    std::int32_t img[Dim];
    memcpy(img, r0 + sizeof r + 12, sizeof img);
    for (int d = 0; d < Dim; ++d) {
      p.image[d][i] = img[d];
      p.x[d][i] = r[d];
      p.v[d][i] = r[Dim + d];
      p.a[d][i] = Real(0);
    }
    p.mass[i] = r[2 * Dim];
    p.type[i] = t;
    p.id[i] = id;
    p.epot[i] = p.virial[i] = Real(0);
  }
}

template <class Real, int Dim>
__global__ void move_kernel(ParticleView<Real, Dim> p, const std::uint32_t* dst,
                            const std::uint32_t* src, std::size_t count) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t a = dst[k], b = src[k];
    for (int d = 0; d < Dim; ++d) {
      p.x[d][a] = p.x[d][b];
      p.v[d][a] = p.v[d][b];
      p.a[d][a] = p.a[d][b];
      p.image[d][a] = p.image[d][b];
    }
    p.mass[a] = p.mass[b];
    p.type[a] = p.type[b];
    p.id[a] = p.id[b];
    p.epot[a] = p.epot[b];
    p.virial[a] = p.virial[b];
  }
}


// Positions of particles idx, shifted, into out as Dim arrays of count (or into `to` at offset).
template <class Real, int Dim>
__global__ void gather_pos_kernel(ParticleView<Real, Dim> p, const std::uint32_t* idx,
                                  std::size_t count, Real s0, Real s1, Real s2, Real* out0,
                                  Real* out1, Real* out2) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t i = idx[k];
    out0[k] = p.x[0][i] + s0;
    out1[k] = p.x[1][i] + s1;
    if (Dim == 3) out2[k] = p.x[Dim - 1][i] + s2;
  }
}

template <class Real, int Dim>
__global__ void gather_static_kernel(ParticleView<Real, Dim> p, const std::uint32_t* idx,
                                     std::size_t count, Real* m, std::int32_t* t) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x) {
    m[k] = p.mass[idx[k]];
    t[k] = p.type[idx[k]];
  }
}

template <class Real>
__global__ void unwrap_kernel(const Real* x, Real* out, std::size_t n, double c, double L) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double u = double(x[i]) - c;
    out[i] = Real(c + (u - L * rint(u / L)));
  }
}

__global__ void fill_id_kernel(std::int64_t* id, std::size_t count) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < count;
       k += std::size_t(gridDim.x) * blockDim.x)
    id[k] = -1;
}

template <class Real, int Dim, bool Assign>
__global__ void add_forces_kernel(ParticleView<Real, Dim> from, ParticleView<Real, Dim> to,
                                  std::size_t n, bool energy) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    for (int d = 0; d < Dim; ++d) to.a[d][i] = Assign ? from.a[d][i] : to.a[d][i] + from.a[d][i];
    if (energy) {
      to.epot[i] = Assign ? from.epot[i] : to.epot[i] + from.epot[i];
      to.virial[i] = Assign ? from.virial[i] : to.virial[i] + from.virial[i];
    }
  }
}

template <class Real, int Dim>
__global__ void displacement_kernel(ParticleView<Real, Dim> p, const Real* ref, PeriodicImage<Real> img,
                                    unsigned int* worst_bits) {
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
__global__ void copy_measure_kernel(ParticleView<Real, Dim> p, const Real* ref, PeriodicImage<Real> img,
                                    Unwrap unwrap, Real* w0, Real* w1, Real* w2,
                                    unsigned int* worst_bits) {
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

template <class Real, int Dim>
__global__ void pack_sources_kernel(ParticleView<Real, Dim> p, Real* pos, std::int32_t* type) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < p.n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    Real r[4];
    for (int d = 0; d < Dim; ++d) r[d] = p.x[d][i];
    r[Dim] = p.mass[i];
    if (Dim == 2) r[3] = Real(0);
    for (int c = 0; c < 4; ++c) pos[4 * i + c] = r[c];
    type[i] = p.type[i];
  }
}

}  // namespace

std::size_t record_bytes(const ParticleStore& s) { return parallel::record_bytes(s); }

void free_device(void* p) { cudaFree(p); }

std::uint32_t* upload_index(std::uint32_t* dev, std::size_t& capacity,
                            const std::vector<std::uint32_t>& host) {
  if (host.size() > capacity || !dev) {
    if (dev) PARDYN_CUDA_CHECK(cudaFree(dev));
    capacity = host.size() + host.size() / 4 + 64;
    PARDYN_CUDA_CHECK(cudaMalloc(&dev, capacity * sizeof(std::uint32_t)));
  }
  if (!host.empty())
    PARDYN_CUDA_CHECK(cudaMemcpy(dev, host.data(), host.size() * sizeof(std::uint32_t),
                                 cudaMemcpyHostToDevice));
  return dev;
}

void gather_records(const ParticleStore& s, const std::uint32_t* idx, std::size_t count,
                    std::vector<char>& out) {
  const std::size_t rb = record_bytes(s);
  const std::size_t base = out.size();
  out.resize(base + rb * count);
  if (count == 0) return;
  char* dev = static_cast<char*>(g_stage.get(rb * count));
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    gather_records_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(p, idx, count, dev, rb);
    PARDYN_CUDA_CHECK_LAUNCH("gather_records_kernel");
  });
  PARDYN_CUDA_CHECK(cudaMemcpy(out.data() + base, dev, rb * count, cudaMemcpyDeviceToHost));
}

void append_records(ParticleStore& s, const char* records, std::size_t count) {
  const std::size_t rb = record_bytes(s);
  const std::size_t n0 = s.size();
  s.resize(n0 + count);
  char* dev = static_cast<char*>(g_stage.get(rb * count));
  PARDYN_CUDA_CHECK(cudaMemcpy(dev, records, rb * count, cudaMemcpyHostToDevice));
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    append_records_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(p, n0, count, dev, rb);
    PARDYN_CUDA_CHECK_LAUNCH("append_records_kernel");
  });
}

void move_particles(ParticleStore& s, const std::uint32_t* dst, const std::uint32_t* src,
                    std::size_t count) {
  if (count == 0) return;
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    move_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(p, dst, src, count);
    PARDYN_CUDA_CHECK_LAUNCH("move_kernel");
  });
}


namespace {
template <class Real, int Dim>
void launch_gather_pos(const ParticleView<Real, Dim>& p, const std::uint32_t* idx, std::size_t count,
                       const double* shift, Real* o0, Real* o1, Real* o2) {
  gather_pos_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(
      p, idx, count, Real(shift[0]), Real(shift[1]), Real(Dim == 3 ? shift[2] : 0.0), o0, o1, o2);
  PARDYN_CUDA_CHECK_LAUNCH("gather_pos_kernel");
}
}  // namespace

void gather_positions(const ParticleStore& from, const std::uint32_t* idx, std::size_t count,
                      const double* shift, std::vector<char>& out) {
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    out.resize(count * Dim * sizeof(Real));
    if (count == 0) return;
    Real* dev = static_cast<Real*>(g_stage.get(count * Dim * sizeof(Real)));
    launch_gather_pos<Real, Dim>(p, idx, count, shift, dev, dev + count, dev + 2 * count);
    PARDYN_CUDA_CHECK(cudaMemcpy(out.data(), dev, out.size(), cudaMemcpyDeviceToHost));
  });
}

void put_positions(ParticleStore& to, std::size_t offset, std::size_t count, const char* data) {
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for (int d = 0; d < Dim; ++d)
      PARDYN_CUDA_CHECK(cudaMemcpy(p.x[d] + offset, data + std::size_t(d) * count * sizeof(Real),
                                   count * sizeof(Real), cudaMemcpyHostToDevice));
  });
}


void gather_static(const ParticleStore& from, const std::uint32_t* idx, std::size_t count,
                   std::vector<char>& out) {
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    out.resize(count * (sizeof(Real) + 4));
    if (count == 0) return;
    char* dev = static_cast<char*>(g_stage.get(out.size()));
    gather_static_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(
        p, idx, count, reinterpret_cast<Real*>(dev),
        reinterpret_cast<std::int32_t*>(dev + count * sizeof(Real)));
    PARDYN_CUDA_CHECK_LAUNCH("gather_static_kernel");
    PARDYN_CUDA_CHECK(cudaMemcpy(out.data(), dev, out.size(), cudaMemcpyDeviceToHost));
  });
}

void put_static(ParticleStore& to, std::size_t offset, std::size_t count, const char* data) {
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    PARDYN_CUDA_CHECK(cudaMemcpy(p.mass + offset, data, count * sizeof(Real), cudaMemcpyHostToDevice));
    PARDYN_CUDA_CHECK(cudaMemcpy(p.type + offset, data + count * sizeof(Real), count * 4,
                                 cudaMemcpyHostToDevice));
    fill_id_kernel<<<blocks_for(count), kThreads>>>(p.id + offset, count);
    PARDYN_CUDA_CHECK_LAUNCH("fill_id_kernel");
  });
}

void copy_prefix(const ParticleStore& from, ParticleStore& to, std::size_t n, bool all,
                 const Unwrap& unwrap) {
  if (n == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const auto q = to.view<Real, Dim>();
    for (int d = 0; d < Dim; ++d) {
      if (unwrap.period[d] > 0) {
        unwrap_kernel<Real><<<blocks_for(n), kThreads>>>(p.x[d], q.x[d], n, unwrap.centre[d],
                                                         unwrap.period[d]);
        PARDYN_CUDA_CHECK_LAUNCH("unwrap_kernel");
      } else {
        PARDYN_CUDA_CHECK(
            cudaMemcpyAsync(q.x[d], p.x[d], n * sizeof(Real), cudaMemcpyDeviceToDevice, 0));
      }
    }
    if (all) {
      PARDYN_CUDA_CHECK(cudaMemcpyAsync(q.mass, p.mass, n * sizeof(Real), cudaMemcpyDeviceToDevice, 0));
      PARDYN_CUDA_CHECK(cudaMemcpyAsync(q.type, p.type, n * 4, cudaMemcpyDeviceToDevice, 0));
      PARDYN_CUDA_CHECK(cudaMemcpyAsync(q.id, p.id, n * 8, cudaMemcpyDeviceToDevice, 0));
    }
  });
}

void add_forces(const ParticleStore& from, ParticleStore& to, std::size_t n, bool energy,
                bool assign) {
  if (n == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    if (assign)
      add_forces_kernel<Real, Dim, true><<<blocks_for(n), kThreads>>>(p, to.view<Real, Dim>(), n, energy);
    else
      add_forces_kernel<Real, Dim, false><<<blocks_for(n), kThreads>>>(p, to.view<Real, Dim>(), n, energy);
    PARDYN_CUDA_CHECK_LAUNCH("add_forces_kernel");
  });
}

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
    launch_gather_pos<Real, Dim>(p, idx, count, shift, o, o + count, o + 2 * count);
  });
}

void pack_static(const ParticleStore& from, const std::uint32_t* idx, std::size_t count, void* out) {
  if (count == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    char* o = static_cast<char*>(out);
    gather_static_kernel<Real, Dim><<<blocks_for(count), kThreads>>>(
        p, idx, count, reinterpret_cast<Real*>(o), reinterpret_cast<std::int32_t*>(o + count * sizeof(Real)));
    PARDYN_CUDA_CHECK_LAUNCH("gather_static_kernel");
  });
}

void unpack_static(ParticleStore& to, std::size_t offset, std::size_t count, const void* in) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    const char* i = static_cast<const char*>(in);
    PARDYN_CUDA_CHECK(cudaMemcpyAsync(p.mass + offset, i, count * sizeof(Real), cudaMemcpyDefault, 0));
    PARDYN_CUDA_CHECK(cudaMemcpyAsync(p.type + offset, i + count * sizeof(Real), count * 4,
                                      cudaMemcpyDefault, 0));
    fill_id_kernel<<<blocks_for(count), kThreads>>>(p.id + offset, count);
    PARDYN_CUDA_CHECK_LAUNCH("fill_id_kernel");
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
    copy_measure_kernel<Real, Dim><<<blocks, kThreads>>>(
        p, static_cast<const Real*>(ref), PeriodicImage<Real>::make(box), unwrap, q.x[0], q.x[1],
        Dim == 3 ? q.x[Dim - 1] : nullptr, bits);
    PARDYN_CUDA_CHECK_LAUNCH("copy_measure_kernel");
  });
  unsigned int h = 0;
  PARDYN_CUDA_CHECK(cudaMemcpy(&h, bits, sizeof h, cudaMemcpyDeviceToHost));
  float f;
  std::memcpy(&f, &h, sizeof f);
  return double(f);
}

void pack_sources(const ParticleStore& s, void* pos, std::int32_t* type) {
  if (s.size() == 0) return;
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    pack_sources_kernel<Real, Dim><<<blocks_for(p.n), kThreads>>>(p, static_cast<Real*>(pos), type);
    PARDYN_CUDA_CHECK_LAUNCH("pack_sources_kernel");
  });
}

}  // namespace pardyn::parallel::gpu
