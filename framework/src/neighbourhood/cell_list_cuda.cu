// SPDX-License-Identifier: BSD-3-Clause
// The CUDA engine of CellListBuilder: binning, sorting (CUB radix sort), cell ranges, the Verlet
// list and the cells' centres of mass, all on the device. The host sees one value per update
// (whether some particle moved more than skin/2) and, at a rebuild, the bounding box of open axes
// and the longest neighbour row (to grow the list when the density rose).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <vector>

#include "backend/cuda_buffer.cuh"
#include "cell_list_impl.hpp"
#include "cell_pyramid.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/cuda_check.hpp"

namespace pardyn::detail {
namespace {

constexpr int kThreads = 256;
inline unsigned blocks_for(std::size_t n) {
  return unsigned(std::max<std::size_t>(1, (n + kThreads - 1) / kThreads));
}

// Pinned host words the device writes into and the host reads after one synchronisation.
struct HostWords {
  unsigned* p = nullptr;
  HostWords() { PARDYN_CUDA_CHECK(cudaMallocHost(&p, 4 * sizeof(unsigned))); }
  ~HostWords() {
    if (p) cudaFreeHost(p);
  }
};

template <class Real, int Dim>
__global__ void bounds_partial(ParticleView<Real, Dim> p, double* out) {
  double lo[Dim], hi[Dim];
  for (int d = 0; d < Dim; ++d) lo[d] = INFINITY, hi[d] = -INFINITY;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
       i += std::size_t(gridDim.x) * blockDim.x)
    for (int d = 0; d < Dim; ++d) {
      const double x = double(p.x[d][i]);
      if (isfinite(x)) lo[d] = fmin(lo[d], x), hi[d] = fmax(hi[d], x);
    }
  __shared__ double s[2 * Dim][kThreads];
  for (int d = 0; d < Dim; ++d) s[d][threadIdx.x] = lo[d], s[Dim + d][threadIdx.x] = hi[d];
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w)
      for (int d = 0; d < Dim; ++d) {
        s[d][threadIdx.x] = fmin(s[d][threadIdx.x], s[d][threadIdx.x + w]);
        s[Dim + d][threadIdx.x] = fmax(s[Dim + d][threadIdx.x], s[Dim + d][threadIdx.x + w]);
      }
    __syncthreads();
  }
  if (threadIdx.x < 2 * Dim) out[blockIdx.x * 2 * Dim + threadIdx.x] = s[threadIdx.x][0];
}

template <class Real, int Dim>
__global__ void cell_keys(ParticleView<Real, Dim> p, CellList g, std::uint32_t* key,
                          std::uint32_t* idx) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= p.n) return;
  int c[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d) c[d] = g.coordinate(p.x[d][i], d);
  key[i] = std::uint32_t(g.cell_index(c[0], c[1], c[2]));
  idx[i] = std::uint32_t(i);
}

__global__ void cell_bounds(const std::uint32_t* key, std::size_t n, std::uint32_t* start,
                            std::uint32_t* end) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const std::uint32_t c = key[k];
  if (k == 0 || key[k - 1] != c) start[c] = std::uint32_t(k);
  if (k == n - 1 || key[k + 1] != c) end[c] = std::uint32_t(k + 1);
}

// Sorted copies of positions and masses; with Build also the reference positions and the types;
// with Check, raises *flag to `epoch` when some particle moved more than sqrt(limit2).
template <class Real, int Dim, bool Build, bool Check>
__global__ void cell_gather(ParticleView<Real, Dim> p, const std::uint32_t* __restrict__ order,
                            CellParticle<Real>* __restrict__ pos, CellParticle<Real>* ref,
                            std::int32_t* type, PeriodicImage<Real> img, Real limit2,
                            unsigned* flag, unsigned epoch) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= p.n) return;
  const std::uint32_t i = order[k];
  CellParticle<Real> r;
  for (int d = 0; d < Dim; ++d) r.c[d] = p.x[d][i];
  r.c[Dim] = p.mass[i];
  if (Dim == 2) r.c[3] = Real(0);
  pos[k] = r;
  if constexpr (Build) {
    ref[k] = r;
    type[k] = p.type[i];
  }
  if constexpr (Check) {
    const CellParticle<Real> o = ref[k];
    Real d2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const Real dx = img.wrap(r.c[d] - o.c[d], d);
      d2 += dx * dx;
    }
    if (!(d2 <= limit2)) *flag = epoch;  // NaN too: rebuild, the framework reports the NaN
  }
}

template <class Real, int Dim>
__global__ void cell_verlet(CellList g, PeriodicImage<Real> img, Real range2, std::uint32_t* nl,
                            std::uint32_t* count, unsigned cap, unsigned* worst) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= g.n) return;
  // A source-only particle (a ghost) needs no list of its own.
  if (g.order[k] >= g.n_targets) {
    count[k] = 0;
    return;
  }
  const CellParticle<Real>* pos = g.positions<Real>();
  const CellParticle<Real> xi = pos[k];
  int c[3];
  g.cell_coords_at<Dim>(xi.c, c);
  unsigned m = 0;
  for_each_stencil_cell<Dim>(g, c, 1, [&](std::size_t cc) PARDYN_INLINE_LAMBDA {
    const std::uint32_t je = g.cell_end[cc];
    for (std::uint32_t j = g.cell_start[cc]; j < je; ++j) {
      const CellParticle<Real> xj = pos[j];
      Real r2 = 0;
      for (int d = 0; d < Dim; ++d) {
        const Real dx = img.wrap(xi.c[d] - xj.c[d], d);
        r2 += dx * dx;
      }
      if (r2 < range2 && j != std::uint32_t(k)) {
        if (m < cap) nl[std::size_t(m) * g.nl_col + k] = j;
        ++m;
      }
    }
  });
  count[k] = m;
  atomicMax(worst, m);
}

// The sums of a warp's lanes, in every lane.
template <int Dim>
__device__ void warp_sum(CellSums<Dim>& s) {
  for (int o = 16; o > 0; o /= 2) {
    s.m += __shfl_xor_sync(0xffffffffu, s.m, o);
    for (int d = 0; d < Dim; ++d) s.mx[d] += __shfl_xor_sync(0xffffffffu, s.mx[d], o);
    for (int q = 0; q < kQuadTerms<Dim>; ++q) s.mxx[q] += __shfl_xor_sync(0xffffffffu, s.mxx[q], o);
  }
}

// Level 0 of the far zones' pyramid: mass, centre of mass and second moments of each cell from its
// particles, one warp per cell, sums in double (cell_pyramid.hpp).
template <class Real, int Dim>
__global__ void cell_moments(CellList g, CellMoment<Real>* mom, Real* quad) {
  constexpr int NQ = kQuadTerms<Dim>;
  const std::size_t c = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (c >= g.ncells) return;
  const CellParticle<Real>* pos = g.positions<Real>();
  int i[3];
  level_cell_coords(c, g.level_cells[0], i);
  double ref[3];
  level_cell_centre<Dim>(g, 0, i, ref);
  CellSums<Dim> s;
  for (std::uint32_t k = g.cell_start[c] + lane; k < g.cell_end[c]; k += 32)
    s.add_particle(pos[k], ref);
  warp_sum(s);
  if (lane == 0) s.finish(ref, mom[c], quad ? quad + NQ * c : nullptr);
}

// Far zones on several ranks: the sums of each cell of the shared level L over this rank's own
// particles, one warp per cell (its lanes take the level-0 cells of the block in turn), packed.
template <class Real, int Dim>
__global__ void cell_own_sums(CellList g, int L, std::size_t n, double* sums) {
  const std::size_t c = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (c >= n) return;
  int i[3];
  level_cell_coords(c, g.level_cells[L], i);
  double ref[3];
  level_cell_centre<Dim>(g, L, i, ref);
  CellSums<Dim> s;
  const std::size_t block = std::size_t(1) << (L * Dim);
  for (std::size_t j = std::size_t(lane); j < block; j += 32) {
    std::size_t cell = 0;
    if (block_cell<Dim>(g, L, i, j, cell)) add_own_particles<Real, Dim>(g, cell, ref, s);
  }
  warp_sum(s);
  if (lane == 0) s.pack(sums + kSumTerms<Dim> * c);
}

// ... and their records from the sums over all ranks: one thread per cell.
template <class Real, int Dim>
__global__ void cell_finish_shared(CellList g, int L, std::size_t n, const double* sums,
                                   CellMoment<Real>* mom, Real* quad) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (c < n) finish_shared_cell<Real, Dim>(g, L, c, sums, mom, quad);
}

// Level l >= 1 of the pyramid from level l - 1: one thread per cell.
template <class Real, int Dim>
__global__ void cell_coarsen(CellList g, int l, std::size_t n, CellMoment<Real>* mom, Real* quad) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (c < n) coarsen_cell<Real, Dim>(g, l, c, mom, quad);
}

template <class Real, int Dim>
class CudaCells {
 public:
  using Rec = CellParticle<Real>;

  bool update(const ParticleStore& s, const Box& box, const CellPlan& plan, CellList& cl) {
    const auto p = s.view<Real, Dim>();
    const std::size_t n = p.n;
    bool rebuild = plan.force || n != n_ || !built_;
    if (n == 0) {
      n_ = 0;
      if (plan.far && plan.comm) {
        // A rank without particles still adds its (empty) sums to the other ranks'.
        const double none[3] = {0, 0, 0};
        plan_grid(cl, Dim, box, plan, none, none);
        ncells_ = cl.ncells;
        PARDYN_CUDA_CHECK(
            cudaMemset(start_.reserve(ncells_, "cell ranges"), 0, ncells_ * sizeof(std::uint32_t)));
        PARDYN_CUDA_CHECK(
            cudaMemset(end_.reserve(ncells_, "cell ranges"), 0, ncells_ * sizeof(std::uint32_t)));
        cl.n = 0;
        moments(cl, plan);
      }
      publish(cl, plan);
      cl.n = 0;
      return rebuild;
    }
    if (!rebuild) {
      // Fresh sorted positions and the displacement check in one kernel, then one word to the host.
      ++epoch_;
      const auto img = PeriodicImage<Real>::make(box);
      cell_gather<Real, Dim, false, true>
          <<<blocks_for(n), kThreads>>>(p, order_.data(), pos_.data(), ref_.data(), type_.data(),
                                        img, Real(plan.half_skin2), words_.data(), epoch_);
      PARDYN_CUDA_CHECK_LAUNCH("cell_gather");
      PARDYN_CUDA_CHECK(
          cudaMemcpy(host_.p, words_.data(), sizeof(unsigned), cudaMemcpyDeviceToHost));
      rebuild = host_.p[0] == epoch_;
    }
    if (rebuild) build(p, box, plan, cl);
    if (plan.far) moments(cl, plan);
    publish(cl, plan);
    return rebuild;
  }

 private:
  // The far zones' pyramid: level 0 from the particles, each level above from the one below; on
  // several ranks the shared level from the ranks' sums (CellList::shared_level).
  void moments(CellList& cl, const CellPlan& plan) {
    constexpr int NQ = kQuadTerms<Dim>;
    Real* quad = nullptr;
    auto cells_of = [&](int l) {
      return std::size_t(cl.level_cells[l][0]) * cl.level_cells[l][1] * cl.level_cells[l][2];
    };
    auto alloc = [&] {
      mom_.reserve(cl.pyramid_cells, "cell pyramid moments");
      if (plan.quadrupole) quad = quad_.reserve(cl.pyramid_cells * NQ, "cell pyramid quadrupoles");
      publish(cl, plan);
    };
    auto level0 = [&] {
      const unsigned b = unsigned((cl.ncells * 32 + kThreads - 1) / kThreads);
      cell_moments<Real, Dim><<<b, kThreads>>>(cl, mom_.data(), quad);
      PARDYN_CUDA_CHECK_LAUNCH("cell_moments");
    };
    auto coarsen = [&](int l) {
      cell_coarsen<Real, Dim>
          <<<blocks_for(cells_of(l)), kThreads>>>(cl, l, cells_of(l), mom_.data(), quad);
      PARDYN_CUDA_CHECK_LAUNCH("cell_coarsen");
    };
    // The shared level: this rank's own particles summed per cell, the sums added over the ranks
    // on the host, the cells' records made from them.
    auto shared = [&](int L) {
      const std::size_t nL = cells_of(L), terms = nL * kSumTerms<Dim>;
      double* sums = sums_.reserve(terms, "far-zone sums over the ranks");
      const unsigned b = unsigned((nL * 32 + kThreads - 1) / kThreads);
      cell_own_sums<Real, Dim><<<b, kThreads>>>(cl, L, nL, sums);
      PARDYN_CUDA_CHECK_LAUNCH("cell_own_sums");
      host_sums_.resize(terms);
      PARDYN_CUDA_CHECK(
          cudaMemcpy(host_sums_.data(), sums, terms * sizeof(double), cudaMemcpyDeviceToHost));
      sum_over_ranks(plan, host_sums_.data(), terms);
      PARDYN_CUDA_CHECK(
          cudaMemcpy(sums, host_sums_.data(), terms * sizeof(double), cudaMemcpyHostToDevice));
      cell_finish_shared<Real, Dim>
          <<<blocks_for(nL), kThreads>>>(cl, L, nL, sums, mom_.data(), quad);
      PARDYN_CUDA_CHECK_LAUNCH("cell_finish_shared");
    };
    build_pyramid(cl, plan, alloc, level0, coarsen, shared);
  }

  void build(const ParticleView<Real, Dim>& p, const Box& box, const CellPlan& plan, CellList& cl) {
    const std::size_t n = p.n;
    n_ = n;
    double bmin[3] = {0, 0, 0}, bmax[3] = {0, 0, 0};
    if (box.any_axis(Boundary::Open, Dim)) {  // open axes need the particles' bounds
      const unsigned nb = std::min<unsigned>(blocks_for(n), 1024);
      double* part = bounds_.reserve(std::size_t(nb) * 2 * Dim, "bounding box");
      bounds_partial<Real, Dim><<<nb, kThreads>>>(p, part);
      PARDYN_CUDA_CHECK_LAUNCH("bounds_partial");
      std::vector<double> h(std::size_t(nb) * 2 * Dim);
      PARDYN_CUDA_CHECK(
          cudaMemcpy(h.data(), part, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
      for (int d = 0; d < Dim; ++d) {
        double lo = INFINITY, hi = -INFINITY;
        for (unsigned b = 0; b < nb; ++b) {
          lo = std::min(lo, h[b * 2 * Dim + d]);
          hi = std::max(hi, h[b * 2 * Dim + Dim + d]);
        }
        bmin[d] = lo <= hi ? lo : 0.0;
        bmax[d] = lo <= hi ? hi : 0.0;
      }
    }
    plan_grid(cl, Dim, box, plan, bmin, bmax);
    cl.n = n;
    ncells_ = cl.ncells;

    std::uint32_t* key = key_.reserve(n, "cell keys");
    std::uint32_t* key_sorted = key2_.reserve(n, "cell keys");
    std::uint32_t* idx = idx_.reserve(n, "cell keys");
    std::uint32_t* order = order_.reserve(n, "sorted order");
    std::uint32_t* start = start_.reserve(ncells_, "cell ranges");
    std::uint32_t* end = end_.reserve(ncells_, "cell ranges");
    pos_.reserve(n, "sorted positions");
    ref_.reserve(n, "sorted positions");
    type_.reserve(n, "sorted types");
    if (!words_.data()) {
      words_.reserve(4, "flags");
      PARDYN_CUDA_CHECK(cudaMemset(words_.data(), 0, 4 * sizeof(unsigned)));
    }

    cell_keys<Real, Dim><<<blocks_for(n), kThreads>>>(p, cl, key, idx);
    PARDYN_CUDA_CHECK_LAUNCH("cell_keys");
    int bits = 1;
    while (bits < 32 && (std::size_t(1) << bits) < ncells_) ++bits;
    std::size_t temp_bytes = 0;
    PARDYN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key, key_sorted, idx,
                                                      order, n, 0, bits));
    void* temp = temp_.reserve(temp_bytes, "sort scratch");
    PARDYN_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key, key_sorted, idx, order, n, 0, bits));
    PARDYN_CUDA_CHECK(cudaMemsetAsync(start, 0, ncells_ * sizeof(std::uint32_t)));
    PARDYN_CUDA_CHECK(cudaMemsetAsync(end, 0, ncells_ * sizeof(std::uint32_t)));
    cell_bounds<<<blocks_for(n), kThreads>>>(key_sorted, n, start, end);
    PARDYN_CUDA_CHECK_LAUNCH("cell_bounds");
    cell_gather<Real, Dim, true, false>
        <<<blocks_for(n), kThreads>>>(p, order, pos_.data(), ref_.data(), type_.data(),
                                      PeriodicImage<Real>::make(box), Real(0), nullptr, 0);
    PARDYN_CUDA_CHECK_LAUNCH("cell_gather");
    ++builds_;
    built_ = true;
    publish(cl, plan);
    if (plan.verlet) build_list(cl, box, plan);
  }

  void build_list(CellList& cl, const Box& box, const CellPlan& plan) {
    const std::size_t n = n_;
    // Rows padded to a multiple of 32 slots: a warp's reads of one column stay aligned.
    pitch_ = (n + 31) / 32 * 32;
    count_.reserve(n, "neighbour counts");
    const auto img = PeriodicImage<Real>::make(box);
    const Real range2 = Real(plan.range * plan.range);
    if (capacity_ == 0) capacity_ = 32;
    for (;;) {
      nl_.reserve(pitch_ * capacity_, "cell list's Verlet list, which a smaller skin shortens");
      cl.nl_col = pitch_;
      PARDYN_CUDA_CHECK(cudaMemsetAsync(words_.data() + 1, 0, sizeof(unsigned)));
      cell_verlet<Real, Dim><<<blocks_for(n), kThreads>>>(
          cl, img, range2, nl_.data(), count_.data(), unsigned(capacity_), words_.data() + 1);
      PARDYN_CUDA_CHECK_LAUNCH("cell_verlet");
      PARDYN_CUDA_CHECK(
          cudaMemcpy(host_.p + 1, words_.data() + 1, sizeof(unsigned), cudaMemcpyDeviceToHost));
      const std::size_t worst = host_.p[1];
      if (worst <= capacity_) break;
      capacity_ = worst + worst / 8 + 4;  // denser than ever: grow and build again
    }
  }

  void publish(CellList& cl, const CellPlan& plan) const {
    publish_cells(cl, plan, n_, capacity_, builds_, order_, start_, end_, pos_, type_, count_, nl_,
                  mom_, quad_);
    cl.half = false;
    cl.nl_row = 1;  // transposed: neighbour m of slot k at nl[m * pitch + k]
    cl.nl_col = pitch_;
  }

  CudaArray<std::uint32_t> key_, key2_, idx_, order_, start_, end_, count_, nl_;
  CudaArray<unsigned> words_;
  CudaArray<Rec> pos_, ref_;
  CudaArray<std::int32_t> type_;
  CudaArray<CellMoment<Real>> mom_;
  CudaArray<Real> quad_;
  CudaArray<double> bounds_, sums_;
  std::vector<double> host_sums_;
  CudaArray<unsigned char> temp_;
  HostWords host_;
  std::size_t n_ = 0, ncells_ = 0, pitch_ = 0, capacity_ = 0;
  std::uint64_t builds_ = 0;
  unsigned epoch_ = 0;
  bool built_ = false;
};

class CudaEngine final : public CellEngine {
 public:
  bool update(const ParticleStore& s, const Box& box, const CellPlan& plan, CellList& cl) override {
    if (s.dim() == 2) {
      if (s.precision() == Precision::Float) return get(f2_).update(s, box, plan, cl);
      return get(d2_).update(s, box, plan, cl);
    }
    if (s.precision() == Precision::Float) return get(f3_).update(s, box, plan, cl);
    return get(d3_).update(s, box, plan, cl);
  }

 private:
  template <class T>
  static T& get(std::unique_ptr<T>& p) {
    if (!p) p = std::make_unique<T>();
    return *p;
  }
  std::unique_ptr<CudaCells<float, 2>> f2_;
  std::unique_ptr<CudaCells<double, 2>> d2_;
  std::unique_ptr<CudaCells<float, 3>> f3_;
  std::unique_ptr<CudaCells<double, 3>> d3_;
};

}  // namespace

std::unique_ptr<CellEngine> make_cuda_cell_engine() {
  if (cuda::device_count() == 0)
    throw Error("cell_list: no CUDA device for a CUDA store; use backend = \"cpu\"");
  return std::make_unique<CudaEngine>();
}

}  // namespace pardyn::detail
