// SPDX-License-Identifier: BSD-3-Clause
// The clusters analysis on the GPU: a lock-free union-find over the cell list's neighbour list.
// Each slot hooks the root of the larger index under the smaller with atomicCAS (so every union
// only ever lowers a parent), finds use path halving; a final pass (without halving) points every
// slot at its root.
// Sizes, the histogram, the selection of large components and the labels are kernels too: only
// the large components and the histogram cross to the host (and, in a parallel run, the root slot
// of every particle, for the join across ranks).
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "../common/device_buffer.cuh"
#include "clusters.hpp"
#include "pardyn/cuda_check.hpp"

namespace pardyn::plugins::clusters {

namespace {

constexpr int kThreads = 256;

__device__ std::uint32_t find_root(std::uint32_t* parent, std::uint32_t x) {
  std::uint32_t p = parent[x];
  while (p != x) {
    const std::uint32_t gp = parent[p];
    if (gp != p) parent[x] = gp;  // path halving: a benign race, parents only move towards roots
    x = p;
    p = gp;
  }
  return x;
}

__global__ void init_kernel(std::uint32_t* parent, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    parent[k] = std::uint32_t(k);
}

__global__ void link_kernel(const CellList cl, std::uint32_t* parent) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < cl.n;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t count = cl.nl_count[k];
    for (std::uint32_t m = 0; m < count; ++m) {
      const std::uint32_t j = cl.neighbour(k, m);
      if (j <= k) continue;  // each pair once (the list holds it from both sides)
      std::uint32_t a = find_root(parent, std::uint32_t(k));
      std::uint32_t b = find_root(parent, j);
      while (a != b) {
        if (a < b) {
          const std::uint32_t t = a;
          a = b;
          b = t;
        }
        // Hook the larger root a under b, if a is still a root.
        const std::uint32_t old = atomicCAS(&parent[a], a, b);
        if (old == a) break;
        a = find_root(parent, old);
        b = find_root(parent, b);
      }
    }
  }
}

// The root of x without path halving: in flatten_kernel a halving write could put an ancestor
// back over the root another thread has just written for its slot.
__device__ std::uint32_t root_of(const std::uint32_t* parent, std::uint32_t x) {
  for (std::uint32_t p = parent[x]; p != x; p = parent[x]) x = p;
  return x;
}

// Every slot's parent becomes its root. The only writes are each thread's own slot's (its root),
// so a slot's parent is always one of its ancestors while others read it, and the root at the end.
__global__ void flatten_kernel(std::uint32_t* parent, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    parent[k] = root_of(parent, std::uint32_t(k));
}

// Component sizes: one count per slot onto its root.
__global__ void size_kernel(const std::uint32_t* parent, std::uint32_t* size, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    atomicAdd(&size[parent[k]], 1u);
}

// Each root: its size into the histogram, and the component into `big` when large enough.
// counters[0]: components in big; counters[1 + b]: histogram bin b.
__global__ void select_kernel(const std::uint32_t* parent, const std::uint32_t* size, std::size_t n,
                              std::uint32_t min_size, Component* big,
                              unsigned long long* counters) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x) {
    if (parent[k] != k) continue;
    const std::uint32_t sz = size[k];
    atomicAdd(&counters[1 + (31 - __clz(int(sz)))], 1ull);
    if (sz >= min_size) big[atomicAdd(&counters[0], 1ull)] = Component{std::uint32_t(k), sz};
  }
}

// The root slot of every particle by store index (for the host: a parallel run's join).
__global__ void roots_kernel(const std::uint32_t* parent, const std::uint32_t* order, std::size_t n,
                             std::uint32_t* root_of_index) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    root_of_index[order[k]] = parent[k];
}

__global__ void scatter_ids_kernel(const Component* big, const std::int32_t* ids, std::size_t m,
                                   std::int32_t* id_of_root) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < m) id_of_root[big[i].root] = ids[i];
}

__global__ void label_kernel(const std::uint32_t* parent, const std::int32_t* id_of_root,
                             const std::uint32_t* order, std::size_t n, std::int32_t* labels) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    labels[order[k]] = id_of_root[parent[k]];
}

class CudaFinder final : public Finder {
 public:
  void find(const CellList& cl, std::uint32_t min_size, Found& out) override {
    const std::size_t n = cl.n;
    out.big.clear();
    for (auto& h : out.hist) h = 0;
    if (n == 0) return;
    std::uint32_t* parent = parent_.get(n);
    std::uint32_t* size = size_.get(n);
    const std::size_t cap = n / std::max<std::uint32_t>(min_size, 1) + 1;
    Component* big = big_.get(cap);
    unsigned long long* counters = counters_.get(1 + kBins);
    const int blocks = int(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535));
    init_kernel<<<blocks, kThreads>>>(parent, n);
    PARDYN_CUDA_CHECK_LAUNCH("clusters init_kernel");
    link_kernel<<<blocks, kThreads>>>(cl, parent);
    PARDYN_CUDA_CHECK_LAUNCH("clusters link_kernel");
    flatten_kernel<<<blocks, kThreads>>>(parent, n);
    PARDYN_CUDA_CHECK_LAUNCH("clusters flatten_kernel");
    PARDYN_CUDA_CHECK(cudaMemset(size, 0, n * sizeof(std::uint32_t)));
    PARDYN_CUDA_CHECK(cudaMemset(counters, 0, (1 + kBins) * sizeof(unsigned long long)));
    size_kernel<<<blocks, kThreads>>>(parent, size, n);
    PARDYN_CUDA_CHECK_LAUNCH("clusters size_kernel");
    select_kernel<<<blocks, kThreads>>>(parent, size, n, min_size, big, counters);
    PARDYN_CUDA_CHECK_LAUNCH("clusters select_kernel");
    unsigned long long c[1 + kBins];
    PARDYN_CUDA_CHECK(cudaMemcpy(c, counters, sizeof c, cudaMemcpyDeviceToHost));
    for (int b = 0; b < kBins; ++b) out.hist[b] = c[1 + b];
    out.big.resize(std::size_t(c[0]));
    if (c[0])
      PARDYN_CUDA_CHECK(
          cudaMemcpy(out.big.data(), big, c[0] * sizeof(Component), cudaMemcpyDeviceToHost));
  }

  void roots(const CellList& cl, std::vector<std::uint32_t>& root_of_index) override {
    const std::size_t n = cl.n;
    root_of_index.resize(n);
    if (n == 0) return;
    std::uint32_t* roots = roots_.get(n);
    const int blocks = int(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535));
    roots_kernel<<<blocks, kThreads>>>(parent_.data(), cl.order, n, roots);
    PARDYN_CUDA_CHECK_LAUNCH("clusters roots_kernel");
    PARDYN_CUDA_CHECK(
        cudaMemcpy(root_of_index.data(), roots, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  }

  void label(const CellList& cl, const std::vector<Component>& big,
             const std::vector<std::int32_t>& id_of_big, std::int32_t* labels) override {
    const std::size_t n = cl.n;
    if (n == 0) return;
    std::int32_t* id_of_root = idmap_.get(n);
    PARDYN_CUDA_CHECK(cudaMemset(id_of_root, 0xff, n * sizeof(std::int32_t)));  // -1
    const std::size_t m = big.size();
    if (m) {
      Component* dbig = big_.get(m);
      std::int32_t* dids = ids_.get(m);
      PARDYN_CUDA_CHECK(
          cudaMemcpy(dbig, big.data(), m * sizeof(Component), cudaMemcpyHostToDevice));
      PARDYN_CUDA_CHECK(
          cudaMemcpy(dids, id_of_big.data(), m * sizeof(std::int32_t), cudaMemcpyHostToDevice));
      scatter_ids_kernel<<<unsigned((m + kThreads - 1) / kThreads), kThreads>>>(dbig, dids, m,
                                                                                id_of_root);
      PARDYN_CUDA_CHECK_LAUNCH("clusters scatter_ids_kernel");
    }
    const int blocks = int(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535));
    label_kernel<<<blocks, kThreads>>>(parent_.data(), id_of_root, cl.order, n, labels);
    PARDYN_CUDA_CHECK_LAUNCH("clusters label_kernel");
  }

 private:
  DeviceBuffer<std::uint32_t> parent_, size_, roots_;
  DeviceBuffer<std::int32_t> idmap_, ids_;
  DeviceBuffer<Component> big_;
  DeviceBuffer<unsigned long long> counters_;
};

}  // namespace

std::unique_ptr<Finder> make_cuda_finder() { return std::make_unique<CudaFinder>(); }

}  // namespace pardyn::plugins::clusters
