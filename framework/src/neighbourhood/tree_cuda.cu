// SPDX-License-Identifier: BSD-3-Clause
// TreeBuilder's GPU engine (pardyn/tree.hpp): every step on the device, each particle's data read
// once.
//   1. bounding cube (CUB reductions), 2. Morton keys, 3. CUB radix sort of (key, store index),
//   4. gather of the sorted positions, masses and types, 5. nodes level by level from the root (one
//   kernel plans each node of a level, a CUB scan numbers the children, a kernel writes them; the
//   host reads one integer per level), 6. multipoles level by level from the deepest up.
// The per-node arithmetic is tree_build.hpp's, shared with the CPU engine (tree.cpp). Everything
// goes to the thread's launch stream (pardyn::cuda::launch_stream(): the default stream, or the
// side stream where the tree exchange builds the sources' tree beside the own walk).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"
#include "pardyn/particles.hpp"
#include "backend/cuda_buffer.cuh"
#include "tree_build.hpp"

namespace pardyn::tree_build {
namespace {

using pardyn::detail::CudaBuffer;

template <class Real, int Dim>
__global__ void keys_kernel(const ParticleView<Real, Dim> p, Frame f, std::uint64_t* keys,
                            std::int32_t* index, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double x[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) x[d] = double(p.x[d][i]);
    keys[i] = morton<Dim>(x, f);
    index[i] = i;
  }
}

template <class Real, int Dim>
__global__ void gather_kernel(const ParticleView<Real, Dim> p, const std::int32_t* perm, Real* src,
                              std::int32_t* type, int n) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    const int i = perm[k];
    Real s[4];
    s[0] = p.x[0][i];
    s[1] = p.x[1][i];
    s[2] = Dim == 3 ? p.x[Dim - 1][i] : Real(0);
    s[3] = p.mass[i];
    if constexpr (sizeof(Real) == 4) {
      reinterpret_cast<float4*>(src)[k] = make_float4(s[0], s[1], s[2], s[3]);
    } else {
      reinterpret_cast<double2*>(src)[2 * std::size_t(k)] = make_double2(s[0], s[1]);
      reinterpret_cast<double2*>(src)[2 * std::size_t(k) + 1] = make_double2(s[2], s[3]);
    }
    type[k] = p.type[i];
  }
}

__global__ void root_kernel(TreeLinks* links, int n) { links[0] = TreeLinks{0, 0, 0, n}; }

template <int Dim>
__global__ void plan_kernel(const std::uint64_t* keys, const TreeLinks* links, int* depth,
                            int* counts, int lb, int le, int leaf_size) {
  const int i = lb + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < le) counts[i - lb] = plan<Dim>(keys, links[i], leaf_size, depth[i]);
  if (i == le) counts[le - lb] = 0;  // so that the exclusive scan's last entry is the total
}

template <int Dim>
__global__ void emit_kernel(const std::uint64_t* keys, TreeLinks* links, const int* depth,
                            const int* offs, int lb, int le) {
  const int i = lb + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < le && offs[i - lb + 1] > offs[i - lb])
    emit<Dim>(keys, links, i, depth[i], le + offs[i - lb]);
}

template <class Real, int Dim, bool Quad>
__global__ void moments_kernel(const TreeLinks* links, const std::uint64_t* keys, const int* depth,
                               const Real* src, Real* com, Real* quad, Real* rcrit2, Frame f,
                               int lb, int le) {
  const int i = lb + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < le) moments<Real, Dim, Quad>(i, links, keys, depth, src, com, quad, rcrit2, f);
}

__global__ void group_count_kernel(const TreeLinks* links, int* counts, int nodes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nodes) counts[i] = node_groups(links, i, nullptr);
  if (i == nodes) counts[nodes] = 0;
}
__global__ void group_write_kernel(const TreeLinks* links, const int* offs, TreeGroup* groups,
                                   int nodes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nodes && offs[i + 1] > offs[i]) node_groups(links, i, groups + offs[i]);
}

constexpr int kThreads = 256;

// bytes from the device to the host, on the launch stream, waited for.
void download(void* host, const void* dev, std::size_t bytes) {
  const cudaStream_t s = cuda::launch_stream();
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  PARDYN_CUDA_CHECK(cudaStreamSynchronize(s));
}

int blocks_for(std::size_t n, int threads) {
  return int(std::min<std::size_t>((n + threads - 1) / threads, 1u << 20));
}

class CudaEngine final : public TypedEngine<CudaEngine> {
  friend TypedEngine<CudaEngine>;

  template <class Real>
  void cub_minmax(const Real* x, int n, Real* out) {
    std::size_t need = 0, need2 = 0;
    PARDYN_CUDA_CHECK(cub::DeviceReduce::Min(nullptr, need, x, out, n, cuda::launch_stream()));
    PARDYN_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, need2, x, out + 1, n, cuda::launch_stream()));
    void* t = temp_.reserve(std::max(need, need2));
    need = temp_.size();
    PARDYN_CUDA_CHECK(cub::DeviceReduce::Min(t, need, x, out, n, cuda::launch_stream()));
    need = temp_.size();
    PARDYN_CUDA_CHECK(cub::DeviceReduce::Max(t, need, x, out + 1, n, cuda::launch_stream()));
  }

  template <class Real, int Dim>
  void build_impl(const ParticleView<Real, Dim>& p, const TreeOptions& prm, Tree& out) {
    out = tree_header<Real, Dim>(p.n, Backend::Cuda, prm);
    if (out.n == 0) return;
    const int n = out.n;
    const Frame f = frame(p, prm);
    const std::uint64_t* keys = nullptr;
    const std::int32_t* perm = nullptr;
    sort(p, f, keys, perm);
    split_nodes<Dim>(keys, n, prm.leaf_size);
    const int nodes = levels_.back();
    multipoles<Real, Dim>(prm, f, keys, nodes);
    const int ngroups = walk_groups(nodes);

    out.nodes = nodes;
    out.groups = groups_.as<TreeGroup>();
    out.ngroups = ngroups;
    out.depth = int(levels_.size()) - 2;
    out.levels = levels_.data();
    out.perm = perm;
    out.src = src_.as<Real>();
    out.type = type_.as<std::int32_t>();
    out.links = links_.as<TreeLinks>();
    out.com = com_.as<Real>();
    out.rcrit2 = rcrit2_.as<Real>();
    out.quad = prm.quadrupole ? quad_.as<Real>() : nullptr;
    out.built = true;
  }

  // 1. The bounding cube.
  template <class Real, int Dim>
  Frame frame(const ParticleView<Real, Dim>& p, const TreeOptions& prm) {
    const int n = int(p.n);
    Real* mm = static_cast<Real*>(minmax_.reserve(6 * sizeof(Real)));
    for (int d = 0; d < Dim; ++d) cub_minmax(p.x[d], n, mm + 2 * d);
    Real host_mm[6];
    download(host_mm, mm, 2 * Dim * sizeof(Real));
    Frame f;
    f.theta = prm.theta;
    f.short_range = prm.short_range;
    double side = 0;
    for (int d = 0; d < Dim; ++d) {
      const double lo = host_mm[2 * d], hi = host_mm[2 * d + 1];
      if (!std::isfinite(lo) || !std::isfinite(hi))
        throw Error("scheme \"tree\": a particle position is NaN or infinite (axis " +
                    std::to_string(d) + "); reduce the time step or check the initial conditions");
      f.lo[d] = lo;
      side = std::max(side, hi - lo);
    }
    f.side = side > 0 ? side * (1 + 1e-6) : 1.0;
    return f;
  }

  // 2-4. Keys, their sort with the store indices, and the sorted particles.
  template <class Real, int Dim>
  void sort(const ParticleView<Real, Dim>& p, const Frame& f, const std::uint64_t*& keys,
            const std::int32_t*& perm) {
    const int n = int(p.n);
    const std::size_t nk = std::size_t(n);
    auto* k0 = static_cast<std::uint64_t*>(keys_[0].reserve(nk * 8));
    auto* k1 = static_cast<std::uint64_t*>(keys_[1].reserve(nk * 8));
    auto* v0 = static_cast<std::int32_t*>(vals_[0].reserve(nk * 4));
    auto* v1 = static_cast<std::int32_t*>(vals_[1].reserve(nk * 4));
    keys_kernel<<<blocks_for(nk, kThreads), kThreads, 0, cuda::launch_stream()>>>(p, f, k0, v0, n);
    PARDYN_CUDA_CHECK_LAUNCH("tree keys_kernel");
    cub::DoubleBuffer<std::uint64_t> kb(k0, k1);
    cub::DoubleBuffer<std::int32_t> vb(v0, v1);
    std::size_t need = 0;
    PARDYN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, need, kb, vb, n, 0, Dim * kBits<Dim>,
                                                      cuda::launch_stream()));
    void* t = temp_.reserve(need);
    need = temp_.size();
    PARDYN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(t, need, kb, vb, n, 0, Dim * kBits<Dim>,
                                                      cuda::launch_stream()));
    keys = kb.Current();
    perm = vb.Current();
    Real* src = static_cast<Real*>(src_.reserve(nk * 4 * sizeof(Real)));
    auto* type = static_cast<std::int32_t*>(type_.reserve(nk * 4));
    gather_kernel<<<blocks_for(nk, kThreads), kThreads, 0, cuda::launch_stream()>>>(p, perm, src,
                                                                                    type, n);
    PARDYN_CUDA_CHECK_LAUNCH("tree gather_kernel");
  }

  // 5. Nodes, level by level: links_, depth_ and levels_.
  template <int Dim>
  void split_nodes(const std::uint64_t* keys, int n, int leaf_size) {
    constexpr int T = kThreads;
    std::size_t cap =
        std::max<std::size_t>(1024, std::size_t(n) / std::size_t(std::max(1, leaf_size)) * 2);
    links_.reserve(cap * sizeof(TreeLinks));
    depth_.reserve(cap * sizeof(int));
    cap = std::min(links_.size() / sizeof(TreeLinks), depth_.size() / sizeof(int));
    root_kernel<<<1, 1, 0, cuda::launch_stream()>>>(links_.as<TreeLinks>(), n);
    PARDYN_CUDA_CHECK_LAUNCH("tree root_kernel");
    std::vector<std::int32_t>& level = levels_;
    level.assign({0, 1});
    for (;;) {
      const int lb = level[level.size() - 2], le = level.back(), m = le - lb;
      int* counts = static_cast<int*>(counts_.reserve(std::size_t(m + 1) * sizeof(int)));
      int* offs = static_cast<int*>(offs_.reserve(std::size_t(m + 1) * sizeof(int)));
      plan_kernel<Dim><<<(m + 1 + T - 1) / T, T, 0, cuda::launch_stream()>>>(
          keys, links_.as<TreeLinks>(), depth_.as<int>(), counts, lb, le, leaf_size);
      PARDYN_CUDA_CHECK_LAUNCH("tree plan_kernel");
      const int total = exclusive_sum(counts, offs, m);
      if (total == 0) break;
      const std::size_t want = std::size_t(le) + std::size_t(total);
      if (want > cap) {
        links_.reserve(want * sizeof(TreeLinks), std::size_t(le) * sizeof(TreeLinks));
        depth_.reserve(want * sizeof(int), std::size_t(le) * sizeof(int));
        cap = std::min(links_.size() / sizeof(TreeLinks), depth_.size() / sizeof(int));
      }
      emit_kernel<Dim><<<(m + T - 1) / T, T, 0, cuda::launch_stream()>>>(
          keys, links_.as<TreeLinks>(), depth_.as<int>(), offs, lb, le);
      PARDYN_CUDA_CHECK_LAUNCH("tree emit_kernel");
      level.push_back(le + total);
    }
  }

  // offs[0, m] = the exclusive sums of counts[0, m] (counts[m] is 0): returns offs[m].
  int exclusive_sum(const int* counts, int* offs, int m) {
    std::size_t need = 0;
    PARDYN_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, need, counts, offs, m + 1, cuda::launch_stream()));
    void* t = temp_.reserve(need);
    need = temp_.size();
    PARDYN_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(t, need, counts, offs, m + 1, cuda::launch_stream()));
    int total = 0;
    download(&total, offs + m, sizeof(int));
    return total;
  }

  // 6. Multipoles from the deepest level up.
  template <class Real, int Dim>
  void multipoles(const TreeOptions& prm, const Frame& f, const std::uint64_t* keys, int nodes) {
    constexpr int T = kThreads;
    constexpr int NQ = kQuadTerms<Dim>;
    const Real* src = src_.as<Real>();
    Real* com = static_cast<Real*>(com_.reserve(std::size_t(nodes) * 4 * sizeof(Real)));
    Real* rc2 = static_cast<Real*>(rcrit2_.reserve(std::size_t(nodes) * sizeof(Real)));
    Real* quad = prm.quadrupole
                     ? static_cast<Real*>(quad_.reserve(std::size_t(nodes) * NQ * sizeof(Real)))
                     : nullptr;
    for (std::size_t l = levels_.size() - 1; l-- > 0;) {
      const int lb = levels_[l], le = levels_[l + 1], m = le - lb;
      if (prm.quadrupole)
        moments_kernel<Real, Dim, true><<<(m + T - 1) / T, T, 0, cuda::launch_stream()>>>(
            links_.as<TreeLinks>(), keys, depth_.as<int>(), src, com, quad, rc2, f, lb, le);
      else
        moments_kernel<Real, Dim, false><<<(m + T - 1) / T, T, 0, cuda::launch_stream()>>>(
            links_.as<TreeLinks>(), keys, depth_.as<int>(), src, com, quad, rc2, f, lb, le);
      PARDYN_CUDA_CHECK_LAUNCH("tree moments_kernel");
    }
  }

  // 7. The walk groups; returns their number.
  int walk_groups(int nodes) {
    constexpr int T = kThreads;
    int* counts = static_cast<int*>(counts_.reserve(std::size_t(nodes + 1) * sizeof(int)));
    int* offs = static_cast<int*>(offs_.reserve(std::size_t(nodes + 1) * sizeof(int)));
    group_count_kernel<<<(nodes + 1 + T - 1) / T, T, 0, cuda::launch_stream()>>>(
        links_.as<TreeLinks>(), counts, nodes);
    PARDYN_CUDA_CHECK_LAUNCH("tree group_count_kernel");
    const int ngroups = exclusive_sum(counts, offs, nodes);
    groups_.reserve(std::size_t(ngroups) * sizeof(TreeGroup));
    group_write_kernel<<<(nodes + T - 1) / T, T, 0, cuda::launch_stream()>>>(
        links_.as<TreeLinks>(), offs, groups_.as<TreeGroup>(), nodes);
    PARDYN_CUDA_CHECK_LAUNCH("tree group_write_kernel");
    return ngroups;
  }

  CudaBuffer<> keys_[2], vals_[2], src_, type_, links_, depth_, counts_, offs_, com_, rcrit2_,
      quad_, temp_, minmax_, groups_;
  std::vector<std::int32_t> levels_;
};

}  // namespace

std::unique_ptr<TreeEngine> make_cuda_engine() { return std::make_unique<CudaEngine>(); }

}  // namespace pardyn::tree_build
