// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend: device queries, device memory, the element-wise kernels integrators use, and
// the compensated reductions observers read. Everything runs on the default stream (0), so kernels,
// copies and the host see one order of operations and no call needs an explicit stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "element_ops.hpp"
#include "pardyn/compensated.hpp"
#include "reduction.hpp"
#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"
#include "pardyn/particles.hpp"
#include "pardyn/reduce_cuda.cuh"

namespace pardyn::cuda {

namespace {

// 256 threads: 8 warps, enough for the block reduction to stay short and for 8 resident blocks to
// fill an SM's 2048 thread slots on Hopper and Ampere.
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024.0 && u < 5) b /= 1024.0, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

// For calls made where throwing is not allowed (destructors, and deallocate, which ParticleStore's
// destructor calls while an earlier error may be unwinding): a failure there is reported on stderr,
// and the error that caused it has already been thrown by the call that met it first. At process
// exit the runtime may be unloaded before static objects are destroyed; that is not worth a word.
void check_noexcept(cudaError_t e, const char* what) noexcept {
  if (e == cudaSuccess || e == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "pardyn: warning: %s failed: %s (%s)\n", what, cudaGetErrorName(e),
               cudaGetErrorString(e));
}

// The error a failed device allocation raises: the size asked for, what the device has, what to do.
[[noreturn]] void out_of_memory(std::size_t bytes, const char* what) {
  // A failed cudaMalloc leaves its error as the "last error"; clear it so that the next launch
  // check does not report this allocation again.
  (void)cudaGetLastError();
  std::size_t free_b = 0, total_b = 0;
  int dev = 0;
  PARDYN_CUDA_CHECK(cudaGetDevice(&dev));
  PARDYN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  throw Error(std::string("CUDA out of memory allocating ") + what + ": asked for " +
              human_bytes(double(bytes)) + " (" + std::to_string(bytes) + " bytes), but GPU " +
              std::to_string(dev) + " has " + human_bytes(double(free_b)) + " free of " +
              human_bytes(double(total_b)) +
              "; use fewer particles, float precision, a GPU with more memory, or "
              "backend = \"cpu\"");
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) out_of_memory(bytes, what);
  PARDYN_CUDA_CHECK(e);
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Device memory.

class DeviceMemory final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    return device_alloc(bytes, "particle arrays");
  }

  void deallocate(void* p) override {
    if (p) check_noexcept(cudaFree(p), "cudaFree");
  }

  // A cudaMemcpy to or from pageable memory runs at the speed of the driver's single-threaded
  // staging (about 8-12 GB/s measured on an H100 host against 52 GB/s from pinned memory). Large
  // copies are staged here instead, by several host threads at once: each owns a slice of the
  // transfer and two pinned buffers, and copies one buffer out while the DMA fills the other.
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    host_copy(dst, src, bytes, true);
  }
  void copy_from_host(void* dst, const void* src, std::size_t bytes) override {
    host_copy(dst, src, bytes, false);
  }

  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes)
      PARDYN_CUDA_CHECK(
          cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cuda::launch_stream()));
  }

  void fill_zero(void* p, std::size_t bytes) override {
    if (bytes) PARDYN_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, cuda::launch_stream()));
  }

  Backend backend() const override { return Backend::Cuda; }

 private:
  // Measured on an H100 host (PCIe 5): one thread copying out of pinned memory gets ~12 GB/s, so
  // a single staging thread is slower than the driver; 8 threads with 4 MiB chunks reach ~35 GB/s.
  // Below 16 MiB the driver's path is as fast and needs no threads.
  static constexpr int kMaxLanes = 8;
  static constexpr std::size_t kChunk = std::size_t(4) << 20;
  static constexpr std::size_t kLaneMin = std::size_t(8) << 20;  // smallest slice worth a thread
  static constexpr std::size_t kStageMin = std::size_t(16) << 20;

  struct Lane {
    char* buffer[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};
  };

  static bool is_pinned(const void* host) {
    cudaPointerAttributes attr{};
    PARDYN_CUDA_CHECK(cudaPointerGetAttributes(&attr, host));
    return attr.type == cudaMemoryTypeHost;
  }

  // Allocates the staging lanes on first use, on the device current then. If pinned memory cannot
  // be had (a container's locked-memory limit, say), or a later call runs with another current
  // device (events belong to one device), copies take the driver's path: slower, still correct.
  bool staging_ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    int dev = 0;
    PARDYN_CUDA_CHECK(cudaGetDevice(&dev));
    if (state_ == 0) {
      state_ = -1;
      char* block = nullptr;
      if (cudaHostAlloc(reinterpret_cast<void**>(&block), std::size_t(kMaxLanes) * 2 * kChunk,
                        cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
      }
      for (int l = 0; l < kMaxLanes; ++l)
        for (int b = 0; b < 2; ++b) {
          lanes_[l].buffer[b] = block + (std::size_t(l) * 2 + b) * kChunk;
          PARDYN_CUDA_CHECK(cudaEventCreateWithFlags(&lanes_[l].done[b], cudaEventDisableTiming));
        }
      device_ = dev;
      state_ = 1;
    }
    return state_ == 1 && dev == device_;
  }

  // A copy between host and device memory (to_host: from the device): the driver's for small
  // copies and pinned host memory, else staged_copy.
  void host_copy(void* dst, const void* src, std::size_t bytes, bool to_host) {
    if (bytes == 0) return;
    if (bytes < kStageMin || is_pinned(to_host ? dst : src) || !staging_ready()) {
      PARDYN_CUDA_CHECK(
          cudaMemcpy(dst, src, bytes, to_host ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice));
      return;
    }
    staged_copy(static_cast<char*>(dst), static_cast<const char*>(src), bytes, to_host);
  }

  void staged_copy(char* dst, const char* src, std::size_t bytes, bool to_host) {
    // One staged copy at a time: the lanes are shared (observers may copy from another thread).
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const int lanes = int(std::min({std::size_t(kMaxLanes), hw, bytes / kLaneMin}));
    // Slices in whole chunks, so that every lane but the last moves full chunks.
    const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
    const std::size_t slice = (chunks + lanes - 1) / lanes * kChunk;

    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&](int l) {
      try {
        // Runtime calls from a new thread go to device 0 unless told otherwise.
        PARDYN_CUDA_CHECK(cudaSetDevice(device_));
        const std::size_t lo = std::min(bytes, std::size_t(l) * slice);
        const std::size_t len = std::min(bytes - lo, slice);
        if (to_host) lane_to_host(lanes_[l], dst + lo, src + lo, len);
        else lane_from_host(lanes_[l], dst + lo, src + lo, len);
      } catch (...) {
        std::lock_guard<std::mutex> g(error_mutex);
        if (!error) error = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    int started = 1;
    try {
      for (; started < lanes; ++started) pool.emplace_back(work, started);
    } catch (const std::system_error&) {
      // No more threads to be had: this thread does the remaining lanes itself.
    }
    work(0);
    for (int l = started; l < lanes; ++l) work(l);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }

  // The work of one lane runs on the default stream, like everything else, so it is ordered after
  // every kernel launched before the copy was asked for, whichever host thread issues it.
  static void lane_to_host(Lane& lane, char* dst, const char* src, std::size_t bytes) {
    if (bytes == 0) return;
    const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
    auto issue = [&](std::size_t k) {
      const std::size_t off = k * kChunk, len = std::min(kChunk, bytes - off);
      PARDYN_CUDA_CHECK(
          cudaMemcpyAsync(lane.buffer[k % 2], src + off, len, cudaMemcpyDeviceToHost, 0));
      PARDYN_CUDA_CHECK(cudaEventRecord(lane.done[k % 2], 0));
    };
    issue(0);
    for (std::size_t k = 0; k < chunks; ++k) {
      // The other buffer was last read by this thread in the previous iteration, so it is free.
      if (k + 1 < chunks) issue(k + 1);
      PARDYN_CUDA_CHECK(cudaEventSynchronize(lane.done[k % 2]));
      const std::size_t off = k * kChunk, len = std::min(kChunk, bytes - off);
      std::memcpy(dst + off, lane.buffer[k % 2], len);
    }
  }

  static void lane_from_host(Lane& lane, char* dst, const char* src, std::size_t bytes) {
    if (bytes == 0) return;
    const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
    for (std::size_t k = 0; k < chunks; ++k) {
      const std::size_t off = k * kChunk, len = std::min(kChunk, bytes - off);
      // Wait until the copy that last read this buffer (two chunks ago) has finished.
      PARDYN_CUDA_CHECK(cudaEventSynchronize(lane.done[k % 2]));
      std::memcpy(lane.buffer[k % 2], src + off, len);
      PARDYN_CUDA_CHECK(
          cudaMemcpyAsync(dst + off, lane.buffer[k % 2], len, cudaMemcpyHostToDevice, 0));
      PARDYN_CUDA_CHECK(cudaEventRecord(lane.done[k % 2], 0));
    }
    // The caller may free or reuse src at once and the next copy reuses the buffers: finish here,
    // as cudaMemcpy from pageable memory would.
    PARDYN_CUDA_CHECK(cudaEventSynchronize(lane.done[(chunks - 1) % 2]));
  }

  std::mutex mutex_;
  int state_ = 0;  // 0: not tried yet, 1: ready, -1: pinned memory unavailable
  int device_ = 0;
  Lane lanes_[kMaxLanes];
};

// ---------------------------------------------------------------------------------------------------
// Grid-stride loops. The element-wise operations are element_ops.hpp's functors, run by
// for_each_cuda.cuh's kernel; the kernels here are the reductions.

__device__ PARDYN_INLINE std::size_t first_index() {
  return std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ PARDYN_INLINE std::size_t grid_stride() { return std::size_t(gridDim.x) * blockDim.x; }

// ---------------------------------------------------------------------------------------------------
// Reductions. Each thread sums its particles into compensated accumulators; a block merges its
// threads' partials in a fixed tree (warp shuffles, then one warp over the warps), writes one
// partial per block, and the host merges the blocks in block order. No atomics: the result depends
// only on the grid, which depends only on n and the device, so a run repeats bit for bit.

using Partial = ParticleSums;
static_assert(std::is_trivially_copyable_v<Partial>);

// The block's tree is the SDK's sum loop's (pardyn/reduce_cuda.cuh, block_merge): warp shuffles,
// then warp 0 over the warps.
template <class Real, int Dim>
__global__ void __launch_bounds__(kThreads)
    reduce_kernel(ParticleView<Real, Dim> p, Partial* __restrict__ out) {
  static_assert(kThreads == detail::kReduceThreads);
  Partial t;
  for (std::size_t i = first_index(); i < p.n; i += grid_stride()) t.add_particle(p, i);
  t = detail::block_merge(t);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}

// ---------------------------------------------------------------------------------------------------
// The operations.

// ---------------------------------------------------------------------------------------------------
// State vectors for multi-stage integrators: 2·dim arrays of n values in one device allocation.

template <class Real>
class CudaState final : public StateVector {
 public:
  CudaState(int dim, std::size_t n) : dim(dim), n(n) {
    data =
        static_cast<Real*>(device_memory().allocate(std::size_t(2 * dim) * n * sizeof(Real) + 1));
  }
  ~CudaState() override { device_memory().deallocate(data); }
  CudaState(const CudaState&) = delete;
  CudaState& operator=(const CudaState&) = delete;
  Real* comp(int c) const { return data + std::size_t(c) * n; }
  int dim;
  std::size_t n;
  Real* data = nullptr;
};

// The store's arrays of the state, x_0..x_{dim-1}, v_0..v_{dim-1}, and up to 8 terms.
template <class Real>
struct CombineArgs {
  Real* out[6];
  const Real* base;
  const Real* k[8];
  double c[8];
  int m;
  int comps;
  std::size_t n;
};

// Largest scaled error per block; the host takes the maximum over the blocks.
template <class Real>
__global__ void __launch_bounds__(kThreads)
    error_kernel(const CombineArgs<Real> a, double atol, double rtol, double* block_max) {
  double worst = 0;
  const std::size_t total = a.n * std::size_t(a.comps);
  for (std::size_t t = first_index(); t < total; t += grid_stride()) {
    const int comp = int(t / a.n);
    const std::size_t j = t - std::size_t(comp) * a.n;
    double err = 0;
    for (int i = 0; i < a.m; ++i) err = fma(a.c[i], double(a.k[i][t]), err);
    const double scale = atol + rtol * fmax(fabs(double(a.base[t])), fabs(double(a.out[comp][j])));
    worst = fmax(worst, fabs(err) / scale);
  }
  for (int offset = 16; offset > 0; offset /= 2)
    worst = fmax(worst, __shfl_down_sync(kFullMask, worst, offset));
  __shared__ double warp_max[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = worst;
  __syncthreads();
  if (threadIdx.x == 0) {
    double b = 0;
    for (int w = 0; w < kThreads / 32; ++w) b = fmax(b, warp_max[w]);
    block_max[blockIdx.x] = b;
  }
}

// The GPU loop: for_each_cuda.cuh's kernel over the particles.
struct CudaLoop {
  template <class F>
  static void run(std::size_t n, const F& f, std::size_t /*parallel_min*/ = 0) {
    pardyn::cuda::for_each_index(n, f);
  }
};

class CudaOps final : public element::ElementOps<CudaLoop, CudaState> {
 public:
  CudaOps() {
    int dev = 0;
    PARDYN_CUDA_CHECK(cudaGetDevice(&dev));
    PARDYN_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
    int threads_per_sm = 0;
    PARDYN_CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    max_blocks_ = std::max(1, sms_ * std::max(1, threads_per_sm / kThreads));
  }

  ~CudaOps() override {
    if (partials_dev_) check_noexcept(cudaFree(partials_dev_), "cudaFree (reduction partials)");
    if (partials_host_)
      check_noexcept(cudaFreeHost(partials_host_), "cudaFreeHost (reduction partials)");
  }

  std::unique_ptr<StateVector> new_state(const ParticleStore& s) override {
    if (s.precision() == Precision::Float)
      return std::make_unique<CudaState<float>>(s.dim(), s.size());
    return std::make_unique<CudaState<double>>(s.dim(), s.size());
  }
  template <class View, class Real = typename View::real>
  CombineArgs<Real> combine_args(const View& p, const StateVector& y, int m, const double* c,
                                 const StateVector* const* k) {
    if (m < 0 || m > 8) throw Error("internal: a state combination takes at most 8 terms");
    constexpr int Dim = View::dim;
    CombineArgs<Real> a{};
    for (int d = 0; d < Dim; ++d) {
      a.out[d] = p.x[d];
      a.out[Dim + d] = p.v[d];
    }
    a.base = element::as_state<CudaState<Real>>(y, p.n).data;
    for (int i = 0; i < m; ++i) {
      a.k[i] = element::as_state<CudaState<Real>>(*k[i], p.n).data;
      a.c[i] = c[i];
    }
    a.m = m;
    a.comps = 2 * Dim;
    a.n = p.n;
    return a;
  }
  double rank_error_norm(const ParticleStore& s, const StateVector& y, int m, const double* e,
                         const StateVector* const* k, double atol, double rtol) override {
    return visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      if (p.n == 0) return 0.0;
      const auto a = combine_args(p, y, m, e, k);
      const int blocks = grid(p.n * a.comps);
      auto* block_max = static_cast<double*>(scratch(blocks * sizeof(double)));
      error_kernel<Real><<<blocks, kThreads>>>(a, atol, rtol, block_max);
      PARDYN_CUDA_CHECK_LAUNCH("error_kernel");
      std::vector<double> host(blocks);
      PARDYN_CUDA_CHECK(
          cudaMemcpy(host.data(), block_max, blocks * sizeof(double), cudaMemcpyDeviceToHost));
      return *std::max_element(host.begin(), host.end());
    });
  }

  Reductions rank_reduce(const ParticleStore& s) override {
    return visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      constexpr int Dim = decltype(p)::dim;
      Reductions r;
      r.n = p.n;
      if (p.n == 0) return r;
      const int blocks = reduce_grid<Real, Dim>(p.n);
      ensure_partials(blocks);
      reduce_kernel<Real, Dim><<<blocks, kThreads>>>(p, partials_dev_);
      PARDYN_CUDA_CHECK_LAUNCH("reduce_kernel");
      PARDYN_CUDA_CHECK(cudaMemcpyAsync(partials_host_, partials_dev_, blocks * sizeof(Partial),
                                        cudaMemcpyDeviceToHost, 0));
      // Also where an execution error of this or any earlier kernel surfaces.
      PARDYN_CUDA_CHECK(cudaStreamSynchronize(0));
      Partial t;
      for (int b = 0; b < blocks; ++b) t.merge(partials_host_[b]);
      return t.result(p.n);
    });
  }

 private:
  // Enough blocks to fill every SM; the grid-stride loops take care of the rest.
  int grid(std::size_t n) const {
    const std::size_t want = (n + kThreads - 1) / kThreads;
    return int(std::min<std::size_t>(want, std::size_t(max_blocks_)));
  }

  // The reduction kernel holds a few dozen doubles per thread, so fewer of its blocks fit on an SM
  // than of the element-wise kernels: ask the occupancy calculator once per instantiation.
  template <class Real, int Dim>
  int reduce_grid(std::size_t n) {
    int& per_sm = reduce_blocks_per_sm_[Dim - 2][std::is_same_v<Real, double>];
    if (per_sm == 0) {
      PARDYN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, reduce_kernel<Real, Dim>, kThreads, 0));
      per_sm = std::max(per_sm, 1);
    }
    const std::size_t want = (n + kThreads - 1) / kThreads;
    return int(std::min<std::size_t>(want, std::size_t(sms_) * per_sm));
  }

  void ensure_partials(int blocks) {
    if (blocks <= partials_capacity_) return;
    if (partials_dev_) PARDYN_CUDA_CHECK(cudaFree(partials_dev_));
    if (partials_host_) PARDYN_CUDA_CHECK(cudaFreeHost(partials_host_));
    partials_dev_ = nullptr;
    partials_host_ = nullptr;
    partials_capacity_ = 0;
    const std::size_t bytes = std::size_t(blocks) * sizeof(Partial);
    partials_dev_ = static_cast<Partial*>(device_alloc(bytes, "reduction partials"));
    // Pinned, so that the copy back is one short DMA with no staging.
    PARDYN_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&partials_host_), bytes));
    partials_capacity_ = blocks;
  }

  int sms_ = 1;
  int max_blocks_ = 1;
  int reduce_blocks_per_sm_[2][2] = {{0, 0}, {0, 0}};  // [Dim - 2][double]
  Partial* partials_dev_ = nullptr;
  Partial* partials_host_ = nullptr;
  int partials_capacity_ = 0;
};

[[noreturn]] void no_device(const char* what) {
  throw Error(std::string(what) +
              ": no CUDA device is visible (driver loaded? CUDA_VISIBLE_DEVICES?); use backend = "
              "\"cpu\" or \"auto\"");
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Device queries.

bool built_with_cuda() { return true; }

int device_count() {
  int n = 0;
  // Without a driver or a device this fails; that is an answer (zero), not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

void select_device(int index) { PARDYN_CUDA_CHECK(cudaSetDevice(index)); }

std::size_t cap_memory(std::size_t bytes) {
  static void* ballast = nullptr;  // held until exit
  std::size_t free_b = 0, total_b = 0;
  PARDYN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (ballast || free_b <= bytes) return free_b;
  // Asked in steps, as the driver may refuse one block as large as everything free.
  std::size_t take = free_b - bytes;
  while (take > 0 && cudaMalloc(&ballast, take) != cudaSuccess) {
    (void)cudaGetLastError();
    ballast = nullptr;
    take -= std::min<std::size_t>(take, std::size_t(64) << 20);
  }
  PARDYN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

DeviceInfo device_info() {
  if (device_count() == 0) no_device("device_info");
  DeviceInfo info;
  PARDYN_CUDA_CHECK(cudaGetDevice(&info.id));
  cudaDeviceProp prop{};
  PARDYN_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.id));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  // cudaDeviceProp lost clockRate in CUDA 13; the attribute is in every version.
  PARDYN_CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, info.id));
  PARDYN_CUDA_CHECK(cudaMemGetInfo(&info.free_memory, &info.total_memory));
  info.l2_bytes = std::size_t(prop.l2CacheSize);
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  return info;
}

MemoryResource& device_memory() {
  // Never destroyed: particle stores in static objects may free into it during exit.
  static DeviceMemory* m = new DeviceMemory;
  return *m;
}

std::unique_ptr<BackendOps> make_ops() {
  if (device_count() == 0) no_device("the CUDA backend");
  return std::make_unique<CudaOps>();
}

void* scratch(std::size_t bytes) {
  // Never destroyed, like device_memory(): the runtime may be gone by the time statics are.
  static std::mutex* mutex = new std::mutex;
  static void* buffer = nullptr;
  static std::size_t capacity = 0;
  std::lock_guard<std::mutex> lock(*mutex);
  if (bytes <= capacity) return buffer;
  // Round up so that a size creeping up by a few bytes a step does not reallocate every step.
  constexpr std::size_t kGranule = std::size_t(2) << 20;
  const std::size_t want = (bytes + kGranule - 1) / kGranule * kGranule;
  if (buffer) {
    // cudaFree waits for the device, so no kernel still reads the old buffer.
    PARDYN_CUDA_CHECK(cudaFree(buffer));
    buffer = nullptr;
    capacity = 0;
  }
  buffer = device_alloc(want, "GPU scratch memory for the force computation");
  capacity = want;
  return buffer;
}

void synchronize(const char* where) {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    const std::string what = std::string("cudaDeviceSynchronize() after ") + where;
    detail::fail(e, what.c_str(), __FILE__, __LINE__);
  }
}

}  // namespace pardyn::cuda
