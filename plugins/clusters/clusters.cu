// The clusters analysis on the GPU: a lock-free union-find over the cell list's neighbour list.
// Each slot hooks the root of the larger index under the smaller with atomicCAS (so every union
// only ever lowers a parent), finds use path halving; a final pass points every slot at its root.
#include <cuda_runtime.h>

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

__global__ void flatten_kernel(std::uint32_t* parent, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x)
    parent[k] = find_root(parent, std::uint32_t(k));
}

}  // namespace

DeviceRoots::DeviceRoots() = default;
DeviceRoots::~DeviceRoots() {
  if (parent_) (void)cudaFree(parent_);
}

void DeviceRoots::compute(const CellList& cl, std::vector<std::uint32_t>& roots,
                          std::vector<std::uint32_t>& order) {
  const std::size_t n = cl.n;
  roots.resize(n);
  order.resize(n);
  if (n == 0) return;
  if (capacity_ < n) {
    if (parent_) PARDYN_CUDA_CHECK(cudaFree(parent_));
    parent_ = nullptr;
    PARDYN_CUDA_CHECK(cudaMalloc(&parent_, n * sizeof(std::uint32_t)));
    capacity_ = n;
  }
  const int blocks = int(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535));
  init_kernel<<<blocks, kThreads>>>(parent_, n);
  PARDYN_CUDA_CHECK_LAUNCH("clusters init_kernel");
  link_kernel<<<blocks, kThreads>>>(cl, parent_);
  PARDYN_CUDA_CHECK_LAUNCH("clusters link_kernel");
  flatten_kernel<<<blocks, kThreads>>>(parent_, n);
  PARDYN_CUDA_CHECK_LAUNCH("clusters flatten_kernel");
  PARDYN_CUDA_CHECK(cudaMemcpy(roots.data(), parent_, n * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost));
  PARDYN_CUDA_CHECK(cudaMemcpy(order.data(), cl.order, n * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost));
}

}  // namespace pardyn::plugins::clusters
