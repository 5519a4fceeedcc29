// SPDX-License-Identifier: BSD-3-Clause
// CellListBuilder: the decisions (when to rebuild, how large the cells) on the host, and the CPU
// engine (OpenMP). The CUDA engine is in cell_list_cuda.cu.
#include "pardyn/cell_list.hpp"

#include <omp.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cell_list_impl.hpp"
#include "cell_pyramid.hpp"

namespace pardyn {
namespace detail {

int plan_shared_level(const CellList& cl, const CellPlan& plan) {
  double w = 0;
  for (int d = 0; d < cl.dim; ++d) w = std::max(w, cl.width[d]);
  // Level 0's exact near zone: the particles of `near` rings of cells around the target's.
  const double near_reach = double(plan.near + 1) * w;
  if (!(near_reach <= plan.ghost_reach))
    throw Error("cell_list far zones on several ranks: the ghosts reach " +
                format_number(plan.ghost_reach) +
                " beyond a rank's particles, less than the exact " +
                "near zone (near + 1 = " + std::to_string(plan.near + 1) + " cells of " +
                format_number(w) + "); use fewer ranks, a smaller cell_size or near");
  // A level l < top serves cells up to 2 rings + 1 of its cells from the target's: the levels
  // below L are this rank's own when (2 rings + 2) cells of level L - 1 fit in the ghosts' reach.
  int L = 0;
  while (L + 1 < cl.levels && double(plan.rings + 1) * std::ldexp(w, L + 1) <= plan.ghost_reach)
    ++L;
  return L;
}

void plan_far(CellPlan& plan, const Box& box, int dim, std::size_t n_all,
              const CellListOptions& opt) {
  for (int d = 0; d < dim; ++d)
    if (box.boundary[d] == Boundary::Periodic)
      throw Error("cell_list far zones (a long-range law) need open or walled axes: axis " +
                  std::to_string(d) +
                  " is periodic; use scheme \"all_pairs\" (minimum image) or make the axis a "
                  "wall");
  if (opt.rings < 1 || 2 * opt.rings < opt.near)
    throw Error("cell_list: rings must be at least 1 and at least near / 2 (got rings = " +
                std::to_string(opt.rings) + ", near = " + std::to_string(opt.near) + ")");
  plan.far = true;
  plan.near = opt.near;
  plan.max_cells = opt.max_cells ? opt.max_cells : 2 * n_all + 1024;
  plan.verlet = false;
  plan.range = std::numeric_limits<double>::infinity();
  plan.rings = opt.rings;
  plan.quadrupole = opt.quadrupole;
  plan.min_width = opt.cell_size;
  // Without a cell size: about kFarParticlesPerCell particles a cell (the pyramid makes the far
  // work grow only with log(cells), so small cells cost little), but wide enough that `near`
  // rings hold the law's short range.
  plan.target_cells = double(n_all) / kFarParticlesPerCell;
  plan.floor_width = opt.short_range > 0 ? opt.short_range / opt.near : 0;
}

double far_cell_width(const Box& box, int dim, std::size_t n_all, const CellListOptions& opt) {
  CellPlan plan;
  plan_far(plan, box, dim, n_all, opt);
  CellList cl;
  cl.dim = dim;
  const double none[3] = {0, 0, 0};
  plan_grid(cl, dim, box, plan, none, none);
  double w = 0;
  for (int d = 0; d < dim; ++d) w = std::max(w, cl.width[d]);
  return w;
}

void sum_over_ranks(const CellPlan& plan, double* sums, std::size_t n) {
  if (plan.comm) plan.comm->sum(sums, n);
}

void plan_grid(CellList& cl, int dim, const Box& box, const CellPlan& plan, const double* bmin,
               const double* bmax) {
  double extent[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) {
    cl.cells[d] = 1;
    cl.width[d] = 1;
    cl.origin[d] = 0;
    cl.periodic[d] = false;
  }
  for (int d = 0; d < dim; ++d) {
    const bool bounded = box.boundary[d] != Boundary::Open;
    cl.periodic[d] = box.boundary[d] == Boundary::Periodic;
    cl.origin[d] = bounded ? box.lo[d] : bmin[d];
    extent[d] = bounded ? box.length(d) : std::max(0.0, bmax[d] - bmin[d]);
  }
  double w = plan.min_width;
  if (w <= 0) {
    // Far zones without a cell size: the cells the plan wants over the grid's volume.
    double big = 0;
    for (int d = 0; d < dim; ++d) big = std::max(big, extent[d]);
    double vol = 1;
    for (int d = 0; d < dim; ++d) vol *= std::max(extent[d], 1e-6 * big + 1e-300);
    w = std::pow(vol / std::max(1.0, plan.target_cells), 1.0 / dim);
    w = std::max(w, plan.floor_width);
  }
  // A small margin keeps a pair at exactly the range from straddling two cells by rounding.
  const double weff = w * (1 + 1e-5);
  const std::size_t max_cells = plan.max_cells;
  double cells[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d)
    cells[d] = extent[d] > weff ? std::min(std::floor(extent[d] / weff), 1048576.0) : 1.0;
  double total = cells[0] * cells[1] * cells[2];
  if (total > double(max_cells)) {
    const double f = std::pow(total / double(max_cells), 1.0 / dim);
    for (int d = 0; d < dim; ++d) cells[d] = std::max(1.0, std::floor(cells[d] / f));
    total = cells[0] * cells[1] * cells[2];
    while (total > double(max_cells)) {
      int big = 0;
      for (int d = 1; d < dim; ++d)
        if (cells[d] > cells[big]) big = d;
      cells[big] -= 1;
      total = cells[0] * cells[1] * cells[2];
    }
  }
  cl.ncells = 1;
  for (int d = 0; d < dim; ++d) {
    cl.cells[d] = int(cells[d]);
    cl.ncells *= std::size_t(cl.cells[d]);
    if (cl.periodic[d]) cl.width[d] = extent[d] / cells[d];
    else cl.width[d] = std::max(extent[d] / cells[d], weff);
  }
  for (int d = 0; d < 3; ++d) cl.inv_width[d] = 1.0 / cl.width[d];
  cl.dim = dim;
}

namespace {

// Which of the eight slots jb .. jb + 7 lie closer than sqrt(range2) to xi (minimum image on periodic
// axes: img.wrap, written out in vector form for AVX2): bit t for slot jb + t. xs holds the sorted
// positions axis by axis, readable up to slot jb + 7.
template <class Real, int Dim>
inline std::uint32_t near8(const Real* const* xs, const Real* xi, const PeriodicImage<Real>& img,
                           Real range2, std::uint32_t jb) {
#if defined(__AVX2__) && defined(__FMA__)
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  if constexpr (std::is_same_v<Real, float>) {
    __m256 r2 = _mm256_setzero_ps();
    for (int d = 0; d < Dim; ++d) {
      __m256 dx = _mm256_sub_ps(_mm256_set1_ps(xi[d]), _mm256_loadu_ps(xs[d] + jb));
      const __m256 k = _mm256_round_ps(_mm256_mul_ps(dx, _mm256_set1_ps(img.invL[d])), kRound);
      dx = _mm256_fnmadd_ps(_mm256_set1_ps(img.L[d]), k, dx);
      r2 = _mm256_fmadd_ps(dx, dx, r2);
    }
    return std::uint32_t(_mm256_movemask_ps(_mm256_cmp_ps(r2, _mm256_set1_ps(range2), _CMP_LT_OQ)));
  } else {
    std::uint32_t bits = 0;
    for (int h = 0; h < 2; ++h) {
      __m256d r2 = _mm256_setzero_pd();
      for (int d = 0; d < Dim; ++d) {
        __m256d dx = _mm256_sub_pd(_mm256_set1_pd(xi[d]), _mm256_loadu_pd(xs[d] + jb + 4 * h));
        const __m256d k = _mm256_round_pd(_mm256_mul_pd(dx, _mm256_set1_pd(img.invL[d])), kRound);
        dx = _mm256_fnmadd_pd(_mm256_set1_pd(img.L[d]), k, dx);
        r2 = _mm256_fmadd_pd(dx, dx, r2);
      }
      bits |=
          std::uint32_t(_mm256_movemask_pd(_mm256_cmp_pd(r2, _mm256_set1_pd(range2), _CMP_LT_OQ)))
          << (4 * h);
    }
    return bits;
  }
#else
  std::uint32_t bits = 0;
  for (int t = 0; t < 8; ++t) {
    Real r2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const Real dx = img.wrap(xi[d] - xs[d][jb + t], d);
      r2 += dx * dx;
    }
    bits |= std::uint32_t(r2 < range2) << t;
  }
  return bits;
#endif
}

// The slice, of `sub` equal slices along a cell, that a particle `within` the cell lies in (within:
// its grid position minus the cell's coordinate, in [0, 1) except for particles clamped into an
// edge cell).
template <class Real>
inline int slice_of(Real within, int sub) {
  const Real s = within * Real(sub);
  return s >= Real(0) ? (s < Real(sub) ? int(s) : sub - 1) : 0;
}

// Below this many pairs in a half Verlet list, its force loop runs on one thread (one range of rows,
// cl.scratch_threads; above it a range per thread, run by HalfListTeam's team). With pardyn's
// passive OpenMP wait (cli/main.cpp), the loop's parallel region, its barrier and its end wake a
// sleeping thread at every step. On the 2-core VM two threads
// ran a 3D LJ liquid's force loop (cut-off + skin 2.8: 39 pairs per atom) no faster than one up to
// about 3,000 atoms when the machine was idle, and 25-30 % slower against a busy loop per core, where
// every wake-up waits for the scheduler; from 4,000 atoms (155,000 pairs) on, two threads were
// faster when idle (bench/RESULTS.md, issue 28 item 3; docs/performance.md, "Threads on a shared
// node"). The count is fixed at each build from the list itself: the order of the sums (and so a
// resumed run, which rebuilds the same list) does not depend on the machine's load.
inline constexpr std::size_t kHalfListParallelMin = std::size_t(1) << 17;  // 131,072

template <class Real, int Dim>
class CpuCells {
 public:
  using Rec = CellParticle<Real>;

  bool update(const ParticleStore& s, const Box& box, const CellPlan& plan, CellList& cl) {
    const auto p = s.view<Real, Dim>();
    const std::size_t n = p.n;
    bool rebuild = plan.force || order_.size() != n;
    if (!rebuild) rebuild = gather(p, box, plan.verlet) > plan.half_skin2;
    if (rebuild) build(p, box, plan, cl);
    if (plan.far) {
      publish(cl, plan);  // the sorted order, which the shared level's sums read
      moments(cl, plan);
    }
    publish(cl, plan);
    return rebuild;
  }

 private:
  // Copies positions and masses of the store into sorted order; returns the largest squared
  // displacement since the last build when `check` (else 0).
  double gather(const ParticleView<Real, Dim>& p, const Box& box, bool check) {
    const auto img = PeriodicImage<Real>::make(box);
    const std::int64_t n = std::int64_t(p.n);
    const std::uint32_t* order = order_.data();
    Rec* pos = pos_.data();
    const Rec* ref = ref_.data();
    Real worst = 0;
    // At every force evaluation: one thread up to where waking the team pays (element_ops.hpp).
#pragma omp parallel for schedule(static) reduction(max : worst) if (n > 32768)
    for (std::int64_t k = 0; k < n; ++k) {
      const std::uint32_t i = order[k];
      Rec r;
      for (int d = 0; d < Dim; ++d) r.c[d] = p.x[d][i];
      r.c[Dim] = p.mass[i];
      if (Dim == 2) r.c[3] = 0;
      pos[k] = r;
      if (check) {
        Real d2 = 0;
        for (int d = 0; d < Dim; ++d) {
          const Real dx = img.wrap(r.c[d] - ref[k].c[d], d);
          d2 += dx * dx;
        }
        worst = std::max(worst, d2);
      }
    }
    // A NaN position must not look like "no motion": rebuild (the framework reports the NaN).
    return std::isfinite(double(worst)) ? double(worst) : std::numeric_limits<double>::infinity();
  }

  void build(const ParticleView<Real, Dim>& p, const Box& box, const CellPlan& plan, CellList& cl) {
    const std::size_t n = p.n;
    double bmin[3] = {0, 0, 0}, bmax[3] = {0, 0, 0};
    if (box.any_axis(Boundary::Open, Dim)) {  // open axes need the particles' bounds
      for (int d = 0; d < Dim; ++d) {
        Real lo = std::numeric_limits<Real>::max(), hi = std::numeric_limits<Real>::lowest();
        const Real* x = p.x[d];
#pragma omp parallel for reduction(min : lo) reduction(max : hi) if (n > 4096)
        for (std::size_t i = 0; i < n; ++i) {
          // Non-finite coordinates are left out of the bounds (they land in an edge cell).
          if (!std::isfinite(x[i])) continue;
          lo = std::min(lo, x[i]);
          hi = std::max(hi, x[i]);
        }
        bmin[d] = n && lo <= hi ? double(lo) : 0.0;
        bmax[d] = n && lo <= hi ? double(hi) : 0.0;
      }
    }
    plan_grid(cl, Dim, box, plan, bmin, bmax);
    const std::size_t nc = cl.ncells;

    // For the Verlet list build, every cell is cut into `sub_` slices along axis 0 (at most 8, and
    // never more slices than particles in all): a row of the stencil along axis 0 is then a run of slices only
    // the range wide either side of a particle's slice instead of three whole cells, which cuts
    // the distances the build tests by about a third. Slices nest in cells, so sorting by slice
    // also sorts by cell.
    sub_ = plan.verlet ? int(std::clamp<std::size_t>(n / std::max<std::size_t>(nc, 1), 1, 8)) : 1;
    const std::size_t nf = nc * std::size_t(sub_);
    // Counting sort by slice, stable: slots within a slice keep store order (deterministic).
    key_.resize(n);
    const CellList& g = cl;
    const int sub = sub_;
#pragma omp parallel for schedule(static) if (n > 4096) num_threads(build_team())
    for (std::size_t i = 0; i < n; ++i) {
      int c[3] = {0, 0, 0};
      const Real f0 = g.grid_position(p.x[0][i], 0);
      c[0] = g.cell_at(f0, 0);
      for (int d = 1; d < Dim; ++d) c[d] = g.coordinate(p.x[d][i], d);
      const int s = sub > 1 ? slice_of(f0 - Real(c[0]), sub) : 0;
      key_[i] = std::uint32_t(g.cell_index(c[0], c[1], c[2]) * std::size_t(sub) + std::size_t(s));
    }
    fstart_.assign(nf, 0);
    fend_.assign(nf, 0);
    for (std::size_t i = 0; i < n; ++i) ++fend_[key_[i]];
    std::uint32_t run = 0;
    for (std::size_t c = 0; c < nf; ++c) {
      fstart_[c] = run;
      run += fend_[c];
      fend_[c] = fstart_[c];
    }
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i) order_[fend_[key_[i]]++] = std::uint32_t(i);
    start_.resize(nc);
    end_.resize(nc);
    for (std::size_t c = 0; c < nc; ++c) {
      start_[c] = fstart_[c * std::size_t(sub)];
      end_[c] = fend_[c * std::size_t(sub) + std::size_t(sub) - 1];
    }
    key_sorted_.resize(n);
    for (std::size_t k = 0; k < n; ++k) key_sorted_[k] = key_[order_[k]];
    type_.resize(n);
    pos_.resize(n);
    ref_.resize(n);
    for (std::size_t k = 0; k < n; ++k) type_[k] = p.type[order_[k]];
    one_type_ =
        std::all_of(type_.begin(), type_.end(), [&](std::int32_t t) { return t == type_[0]; });
    gather(p, box, false);
    std::copy(pos_.begin(), pos_.end(), ref_.begin());
    ++builds_;
    // Publish the grid before the list build reads it.
    publish(cl, plan);
    if (plan.verlet) build_list(cl, box, plan);
  }

  // The Verlet list: for every slot, the slots closer than the range (half: only the higher ones).
  // The candidates of a slot are the runs of slices of the 3^(dim-1) rows of cells around it, each
  // run the range wide either side of its slice (at most two runs per row where the row wraps
  // around a periodic face); they are tested eight at a time (near8) and the close ones appended.
  // One pass with the capacity it has; if a slot has more neighbours than that, the capacity grows
  // to fit and the pass runs again (never a silent truncation).
  void build_list(const CellList& cl, const Box& box, const CellPlan& plan) {
    const std::int64_t n = std::int64_t(order_.size());
    count_.resize(static_cast<std::size_t>(n));
    const auto img = PeriodicImage<Real>::make(box);
    const Real range2 = Real(plan.range * plan.range);
    // The positions axis by axis, padded so that eight slots can be read from any slot.
    for (int d = 0; d < Dim; ++d) {
      xs_[d].resize(std::size_t(n) + 8);
      for (std::int64_t k = 0; k < n; ++k) xs_[d][std::size_t(k)] = pos_[std::size_t(k)].c[d];
      std::fill(xs_[d].begin() + n, xs_[d].end(), Real(0));
    }
    const Real* xs[3] = {xs_[0].data(), Dim > 1 ? xs_[1].data() : nullptr,
                         Dim > 2 ? xs_[2].data() : nullptr};
    const int sub = sub_;
    const int nf0 = cl.cells[0] * sub;  // slices along axis 0
    // The range reaches `sub` slices either side of a slot's own (slices are >= range / sub wide);
    // a periodic axis 0 with fewer than 3 cells is scanned whole, each slot once.
    const bool whole_row = cl.periodic[0] && cl.cells[0] < 3;
    for (;;) {
      const std::size_t cap = capacity_;
      nl_.resize(std::size_t(n) * cap);
      std::uint32_t worst = 0;
      std::size_t pairs = 0;
      const int nt = build_team();
#pragma omp parallel for schedule(static) reduction(max : worst) reduction(+ : pairs) \
    if (n > 2048) num_threads(nt)
      for (std::int64_t k = 0; k < n; ++k) {
        Real xi[3] = {0, 0, 0};
        for (int d = 0; d < Dim; ++d) xi[d] = xs[d][k];
        const std::uint32_t f = key_sorted_[std::size_t(k)];
        const int cf = int(f % std::uint32_t(nf0));
        const std::uint32_t rest = f / std::uint32_t(nf0);
        int c[3] = {cf / sub, 0, 0};
        if (Dim > 1) c[1] = int(rest % std::uint32_t(cl.cells[1]));
        if (Dim > 2) c[2] = int(rest / std::uint32_t(cl.cells[1]));
        std::uint32_t* row = nl_.data() + std::size_t(k) * cap;
        std::uint32_t m = 0;
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int d = 1; d < Dim; ++d) cl.axis_range(d, c[d], 1, lo[d], hi[d]);
        const std::uint32_t first = plan.half ? std::uint32_t(k) + 1 : 0;  // half: j > k only
        auto scan = [&](std::uint32_t sb, std::uint32_t se) {
          for (std::uint32_t jb = std::max(sb, first); jb < se; jb += 8) {
            std::uint32_t bits = near8<Real, Dim>(xs, xi, img, range2, jb);
            if (se - jb < 8) bits &= (1u << (se - jb)) - 1u;
            if (std::uint32_t(k) - jb < 8) bits &= ~(1u << (std::uint32_t(k) - jb));  // not itself
            for (; bits; bits &= bits - 1) {
              if (m < cap) row[m] = jb + std::uint32_t(__builtin_ctz(bits));
              ++m;
            }
          }
        };
        for (int a2 = lo[2]; a2 <= hi[2]; ++a2)
          for (int a1 = lo[1]; a1 <= hi[1]; ++a1) {
            const int w1 = Dim > 1 ? cl.wrap_cell(a1, 1) : 0,
                      w2 = Dim > 2 ? cl.wrap_cell(a2, 2) : 0;
            const std::size_t base = cl.cell_index(0, w1, w2) * std::size_t(sub);
            const int xlo = cf - sub, xhi = cf + sub;
            if (whole_row) {
              scan(fstart_[base], fend_[base + std::size_t(nf0 - 1)]);
            } else if (!cl.periodic[0] || (xlo >= 0 && xhi < nf0)) {
              const int a = std::max(xlo, 0), b = std::min(xhi, nf0 - 1);
              scan(fstart_[base + std::size_t(a)], fend_[base + std::size_t(b)]);
            } else if (xlo < 0) {  // wraps below slice 0
              scan(fstart_[base], fend_[base + std::size_t(xhi)]);
              scan(fstart_[base + std::size_t(xlo + nf0)], fend_[base + std::size_t(nf0 - 1)]);
            } else {  // wraps above the last slice
              scan(fstart_[base], fend_[base + std::size_t(xhi - nf0)]);
              scan(fstart_[base + std::size_t(xlo)], fend_[base + std::size_t(nf0 - 1)]);
            }
          }
        count_[std::size_t(k)] = m;
        worst = std::max(worst, m);
        pairs += m;
      }
      pairs_ = pairs;
      if (worst <= cap) break;
      capacity_ = std::size_t(worst) + std::size_t(worst) / 8 + 4;  // denser than ever: grow
    }
  }

  // The far zones' pyramid: level 0 from the particles, each level above from the one below; on
  // several ranks the shared level from the ranks' sums (CellList::shared_level).
  void moments(CellList& cl, const CellPlan& plan) {
    constexpr int NQ = kQuadTerms<Dim>;
    Real* quad = nullptr;
    auto alloc = [&] {
      mom_.resize(cl.pyramid_cells);
      quad_.resize(plan.quadrupole ? cl.pyramid_cells * NQ : 0);
      quad = plan.quadrupole ? quad_.data() : nullptr;
    };
    auto level0 = [&] {
      const std::int64_t nc = std::int64_t(cl.ncells);
#pragma omp parallel for schedule(static) if (nc > 256)
      for (std::int64_t c = 0; c < nc; ++c) {
        int i[3];
        level_cell_coords(std::size_t(c), cl.level_cells[0], i);
        double ref[3];
        level_cell_centre<Dim>(cl, 0, i, ref);
        CellSums<Dim> sums;
        for (std::uint32_t k = start_[c]; k < end_[c]; ++k) sums.add_particle(pos_[k], ref);
        sums.finish(ref, mom_[std::size_t(c)], quad ? quad + NQ * std::size_t(c) : nullptr);
      }
    };
    auto coarsen = [&](int l) {
      const std::int64_t n =
          std::int64_t(cl.level_cells[l][0]) * cl.level_cells[l][1] * cl.level_cells[l][2];
#pragma omp parallel for schedule(static) if (n > 256)
      for (std::int64_t c = 0; c < n; ++c)
        coarsen_cell<Real, Dim>(cl, l, std::size_t(c), mom_.data(), quad);
    };
    build_pyramid(cl, plan, alloc, level0, coarsen,
                  [&](int L) { shared_level(cl, plan, L, quad); });
  }

  // The shared level L: this rank's own particles summed per cell, the sums added over the ranks,
  // the cells' records made from them.
  void shared_level(CellList& cl, const CellPlan& plan, int L, Real* quad) {
    const std::int64_t nL =
        std::int64_t(cl.level_cells[L][0]) * cl.level_cells[L][1] * cl.level_cells[L][2];
    const std::size_t block = std::size_t(1) << (L * Dim);
    sums_.assign(std::size_t(nL) * kSumTerms<Dim>, 0.0);
#pragma omp parallel for schedule(dynamic, 16) if (nL > 64)
    for (std::int64_t c = 0; c < nL; ++c) {
      int i[3];
      level_cell_coords(std::size_t(c), cl.level_cells[L], i);
      double ref[3];
      level_cell_centre<Dim>(cl, L, i, ref);
      CellSums<Dim> s;
      for (std::size_t j = 0; j < block; ++j) {
        std::size_t cell = 0;
        if (block_cell<Dim>(cl, L, i, j, cell)) add_own_particles<Real, Dim>(cl, cell, ref, s);
      }
      s.pack(sums_.data() + kSumTerms<Dim> * std::size_t(c));
    }
    sum_over_ranks(plan, sums_.data(), sums_.size());
    for (std::int64_t c = 0; c < nL; ++c)
      finish_shared_cell<Real, Dim>(cl, L, std::size_t(c), sums_.data(), mom_.data(), quad);
  }

  void publish(CellList& cl, const CellPlan& plan) {
    if (plan.verlet && plan.half) {
      threads_ = pairs_ < kHalfListParallelMin ? 1 : std::max(1, omp_get_max_threads());
      scratch_.resize(std::size_t(threads_) * 8 * order_.size());
      if (team_.ranges != threads_) team_.reset(threads_);
    }
    publish_cells(cl, plan, order_.size(), capacity_, builds_, order_, start_, end_, pos_, type_,
                  count_, nl_, mom_, quad_);
    cl.scratch = plan.verlet && plan.half ? scratch_.data() : nullptr;
    cl.scratch_threads = plan.verlet && plan.half ? threads_ : 0;
    cl.team = plan.verlet && plan.half ? &team_ : nullptr;
    cl.one_type = one_type_;
    cl.half = plan.verlet && plan.half;
    cl.nl_row = capacity_;  // row-major: neighbour m of slot k at nl[k * capacity + m]
    cl.nl_col = 1;
  }

  // The threads of the list build's loops (whose results do not depend on their number): the team
  // that the half list's force loop found fastest (HalfListTeam), all threads before it has one.
  int build_team() {
    return team_.ranges < 2 ? std::max(1, omp_get_max_threads()) : team_.next(false);
  }

  std::vector<std::uint32_t> key_, key_sorted_, order_, start_, end_, fstart_, fend_, count_, nl_;
  std::vector<Real> xs_[3];
  int sub_ = 1;
  std::vector<std::int32_t> type_;
  std::vector<Rec> pos_, ref_;
  std::vector<CellMoment<Real>> mom_;
  std::vector<Real> quad_;
  std::vector<double> sums_;
  std::vector<Real> scratch_;
  int threads_ = 1;
  HalfListTeam team_;
  std::size_t pairs_ = 0;  // the half list's pairs (its entries), counted at each build
  bool one_type_ = false;
  std::size_t capacity_ = 0;
  std::uint64_t builds_ = 0;
};

class CpuEngine final : public CellEngine {
 public:
  bool update(const ParticleStore& s, const Box& box, const CellPlan& plan, CellList& cl) override {
    if (s.dim() == 2) {
      if (s.precision() == Precision::Float) return f2_.update(s, box, plan, cl);
      return d2_.update(s, box, plan, cl);
    }
    if (s.precision() == Precision::Float) return f3_.update(s, box, plan, cl);
    return d3_.update(s, box, plan, cl);
  }

 private:
  CpuCells<float, 2> f2_;
  CpuCells<double, 2> d2_;
  CpuCells<float, 3> f3_;
  CpuCells<double, 3> d3_;
};

}  // namespace

std::unique_ptr<CellEngine> make_cpu_cell_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace detail

// ---------------------------------------------------------------------------------------------------
struct CellListBuilder::Impl {
  std::unique_ptr<detail::CellEngine> engine;
  Backend backend = Backend::Cpu;
  CellList cl;
  // What the last build was made for: a change forces a rebuild.
  bool built = false;
  std::size_t n = 0;
  int dim = 0;
  Precision precision = Precision::Double;
  Box box;
  CellListOptions opt;
  const ParticleStore* store = nullptr;
  std::uint64_t generation = 0;
};

CellListBuilder::CellListBuilder() : impl_(std::make_unique<Impl>()) {}
CellListBuilder::~CellListBuilder() {
  // PARDYN_CELL_STATS=1: how often the structure was rebuilt (to tune the skin).
  if (impl_ && impl_->built && std::getenv("PARDYN_CELL_STATS")) {
    const CellList& cl = impl_->cl;
    std::fprintf(stderr,
                 "cell_list: %llu updates, %llu rebuilds, %zu cells (%d x %d x %d), %zu particles, "
                 "list capacity %zu\n",
                 (unsigned long long)cl.updates, (unsigned long long)cl.builds, cl.ncells,
                 cl.cells[0], cl.cells[1], cl.cells[2], cl.n, cl.nl_capacity);
  }
}

const CellList& CellListBuilder::list() const { return impl_->cl; }

namespace {
bool same_box(const Box& a, const Box& b) {
  for (int d = 0; d < 3; ++d)
    if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d] || a.boundary[d] != b.boundary[d]) return false;
  return true;
}
bool same_options(const CellListOptions& a, const CellListOptions& b) {
  return a.cutoff == b.cutoff && a.skin == b.skin && a.neighbour_list == b.neighbour_list &&
         a.half_list == b.half_list && a.cell_size == b.cell_size && a.near == b.near &&
         a.max_cells == b.max_cells && a.comm == b.comm && a.ghost_reach == b.ghost_reach;
}
}  // namespace

bool CellListBuilder::update(const ParticleStore& s, const Box& box, const CellListOptions& opt) {
  Impl& m = *impl_;
  const int dim = s.dim();
  if (!(opt.cutoff > 0))
    throw Error("cell_list: the interaction range must be positive (got " +
                format_number(opt.cutoff) + ")");
  if (!(opt.skin >= 0) || !std::isfinite(opt.skin))
    throw Error("cell_list: skin must be a finite length >= 0 (got " + format_number(opt.skin) +
                ")");
  if (opt.near < 1) throw Error("cell_list: near must be at least 1 ring of cells");

  detail::CellPlan plan;
  plan.far = !std::isfinite(opt.cutoff);
  plan.cutoff = opt.cutoff;
  plan.near = opt.near;
  // Far zones on several ranks: one grid over the whole box for all ranks' particles.
  std::size_t n_all = s.size();
  if (plan.far && opt.comm) {
    for (int d = 0; d < dim; ++d)
      if (box.boundary[d] == Boundary::Open)
        throw Error(
            "cell_list far zones on several ranks need walled axes (the ranks share one "
            "grid over the box): axis " +
            std::to_string(d) +
            " is open; give the box walls (boundary = \"wall\"), use scheme \"tree\" "
            "(which runs on several ranks with open axes), or run on one rank");
    std::int64_t n = std::int64_t(s.targets());
    opt.comm->sum(&n, 1);
    n_all = std::size_t(n);
    plan.comm = opt.comm;
    plan.ghost_reach = opt.ghost_reach;
  }
  if (plan.far) {
    detail::plan_far(plan, box, dim, n_all, opt);
  } else {
    plan.max_cells = opt.max_cells ? opt.max_cells : 2 * n_all + 1024;
    plan.verlet = opt.neighbour_list;
    plan.half = plan.verlet && opt.half_list && s.backend() == Backend::Cpu;
    plan.range = plan.verlet ? opt.cutoff + opt.skin : opt.cutoff;
    if (opt.cell_size > 0 && opt.cell_size < plan.range)
      throw Error("cell_list: cell_size = " + format_number(opt.cell_size) +
                  " is smaller than the range it must cover (cut-off + skin = " +
                  format_number(plan.range) + "); raise cell_size or leave it out");
    plan.min_width = std::max(opt.cell_size, plan.range);
    plan.half_skin2 = 0.25 * opt.skin * opt.skin;
  }
  // Rebuild whenever the list cannot be trusted: no list to reuse (stencil and far zones sort at
  // every evaluation), no skin, or anything but the positions changed.
  plan.force = !m.built || !plan.verlet || opt.skin == 0 || m.n != s.size() || m.dim != dim ||
               m.precision != s.precision() || m.backend != s.backend() || !same_box(m.box, box) ||
               !same_options(m.opt, opt) || m.store != &s || m.generation != s.generation();

  if (!m.engine || m.backend != s.backend()) {
    m.engine.reset();
    m.engine = s.backend() == Backend::Cuda ? detail::make_cuda_cell_engine()
                                            : detail::make_cpu_cell_engine();
    plan.force = true;
  }
  m.cl.n_targets = s.targets();
  const bool rebuilt = m.engine->update(s, box, plan, m.cl);
  m.cl.updates += 1;
  m.built = true;
  m.n = s.size();
  m.dim = dim;
  m.precision = s.precision();
  m.backend = s.backend();
  m.box = box;
  m.opt = opt;
  m.store = &s;
  m.generation = s.generation();
  return rebuilt;
}

}  // namespace pardyn
