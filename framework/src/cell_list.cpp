// CellListBuilder: the decisions (when to rebuild, how large the cells) on the host, and the CPU
// engine (OpenMP). The CUDA engine is in cell_list_cuda.cu.
#include "pardyn/cell_list.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "cell_list_impl.hpp"

#if defined(__BYTE_ORDER__)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the Verlet list build turns eight flag bytes into bits with a little-endian load");
#endif

namespace pardyn {
namespace detail {

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
    if (cl.periodic[d])
      cl.width[d] = extent[d] / cells[d];
    else
      cl.width[d] = std::max(extent[d] / cells[d], weff);
  }
  for (int d = 0; d < 3; ++d) cl.inv_width[d] = 1.0 / cl.width[d];
  cl.dim = dim;
}

namespace {

// Which axes need the particles' bounding box.
bool any_open(const Box& box, int dim) {
  for (int d = 0; d < dim; ++d)
    if (box.boundary[d] == Boundary::Open) return true;
  return false;
}

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
    if (plan.far) moments(cl);
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
#pragma omp parallel for schedule(static) reduction(max : worst) if (n > 4096)
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
    if (any_open(box, Dim)) {
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

    // Counting sort by cell, stable: slots within a cell keep store order (deterministic).
    key_.resize(n);
    const CellList& g = cl;
#pragma omp parallel for schedule(static) if (n > 4096)
    for (std::size_t i = 0; i < n; ++i) {
      int c[3] = {0, 0, 0};
      for (int d = 0; d < Dim; ++d) c[d] = g.coordinate(p.x[d][i], d);
      key_[i] = std::uint32_t(g.cell_index(c[0], c[1], c[2]));
    }
    start_.assign(nc, 0);
    end_.assign(nc, 0);
    for (std::size_t i = 0; i < n; ++i) ++end_[key_[i]];
    std::uint32_t run = 0;
    for (std::size_t c = 0; c < nc; ++c) {
      start_[c] = run;
      run += end_[c];
      end_[c] = start_[c];
    }
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i) order_[end_[key_[i]]++] = std::uint32_t(i);
    type_.resize(n);
    pos_.resize(n);
    ref_.resize(n);
    for (std::size_t k = 0; k < n; ++k) type_[k] = p.type[order_[k]];
    gather(p, box, false);
    std::copy(pos_.begin(), pos_.end(), ref_.begin());
    ++builds_;
    // Publish the grid before the list build reads it.
    publish(cl, plan);
    if (plan.verlet) build_list(cl, box, plan);
  }

  // The Verlet list: for every slot, the slots closer than the range (half: only the higher ones),
  // in stencil order. One pass with the capacity it has; if a slot has more neighbours than that,
  // the capacity grows to fit and the pass runs again (never a silent truncation).
  void build_list(const CellList& cl, const Box& box, const CellPlan& plan) {
    const std::int64_t n = std::int64_t(order_.size());
    count_.resize(static_cast<std::size_t>(n));
    const auto img = PeriodicImage<Real>::make(box);
    const Real range2 = Real(plan.range * plan.range);
    constexpr std::uint32_t kChunk = 64;
    for (;;) {
      const std::size_t cap = capacity_;
      nl_.resize(std::size_t(n) * cap);
      std::uint32_t worst = 0;
      const Rec* pos = pos_.data();
#pragma omp parallel for schedule(static) reduction(max : worst) if (n > 2048)
      for (std::int64_t k = 0; k < n; ++k) {
        const Rec xi = pos[k];
        int c[3] = {0, 0, 0};
        for (int d = 0; d < Dim; ++d) c[d] = cl.coordinate(xi.c[d], d);
        std::uint32_t* row = nl_.data() + std::size_t(k) * cap;
        std::uint32_t m = 0;
        int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int d = 0; d < Dim; ++d) cl.axis_range(d, c[d], 1, lo[d], hi[d]);
        // Candidates: slot ranges. The cells of one row along x are contiguous in the sorted order,
        // so a row's stencil cells form one range unless it wraps around a periodic face.
        const std::uint32_t first = plan.half ? std::uint32_t(k) + 1 : 0;  // half: j > k only
        auto scan = [&](std::uint32_t sb, std::uint32_t se) {
          sb = std::max(sb, first);
          // Distances of a chunk as one SIMD loop, then a bit mask of the close ones, walked bit by
          // bit: the scalar work is per neighbour found, not per candidate.
          for (std::uint32_t jb = sb; jb < se; jb += kChunk) {
            const int len = int(std::min<std::uint32_t>(kChunk, se - jb));
            alignas(64) std::uint8_t close[kChunk + 8];
#pragma omp simd
            for (int t = 0; t < len; ++t) {
              const Rec& r = pos[jb + t];
              const Real d0 = img.wrap(xi.c[0] - r.c[0], 0), d1 = img.wrap(xi.c[1] - r.c[1], 1);
              const Real d2 = Dim == 3 ? img.wrap(xi.c[2] - r.c[2], 2) : Real(0);
              close[t] = d0 * d0 + d1 * d1 + d2 * d2 < range2;
            }
            for (int t = len; t < ((len + 7) & ~7); ++t) close[t] = 0;
            // Eight 0/1 bytes to eight bits at once: the multiply moves byte i's bit to bit 56 + i.
            std::uint64_t bits = 0;
            for (int g = 0; g < len; g += 8) {
              std::uint64_t w;
              std::memcpy(&w, close + g, 8);
              bits |= ((w * 0x0102040810204080ull) >> 56) << g;
            }
            if (std::uint32_t(k) >= jb && std::uint32_t(k) < jb + std::uint32_t(len))
              bits &= ~(std::uint64_t(1) << (std::uint32_t(k) - jb));  // not itself
            for (; bits; bits &= bits - 1) {
              if (m < cap) row[m] = jb + std::uint32_t(__builtin_ctzll(bits));
              ++m;
            }
          }
        };
        for (int a2 = lo[2]; a2 <= hi[2]; ++a2)
          for (int a1 = lo[1]; a1 <= hi[1]; ++a1) {
            const int w1 = cl.wrap_cell(a1, 1), w2 = Dim == 3 ? cl.wrap_cell(a2, 2) : 0;
            if (lo[0] >= 0 && hi[0] < cl.cells[0]) {
              scan(start_[cl.cell_index(lo[0], w1, w2)], end_[cl.cell_index(hi[0], w1, w2)]);
            } else {
              for (int a0 = lo[0]; a0 <= hi[0]; ++a0) {
                const std::size_t cc = cl.cell_index(cl.wrap_cell(a0, 0), w1, w2);
                scan(start_[cc], end_[cc]);
              }
            }
          }
        count_[std::size_t(k)] = m;
        worst = std::max(worst, m);
      }
      if (worst <= cap) break;
      capacity_ = std::size_t(worst) + std::size_t(worst) / 8 + 4;  // denser than ever: grow
    }
  }

  void moments(const CellList& cl) {
    const std::int64_t nc = std::int64_t(cl.ncells);
    mom_.resize(std::size_t(nc));
#pragma omp parallel for schedule(static) if (nc > 256)
    for (std::int64_t c = 0; c < nc; ++c) {
      double m = 0, mx[3] = {0, 0, 0};
      for (std::uint32_t k = start_[c]; k < end_[c]; ++k) {
        const double mk = double(pos_[k].c[Dim]);
        m += mk;
        for (int d = 0; d < Dim; ++d) mx[d] += mk * double(pos_[k].c[d]);
      }
      // An empty cell sits at its geometric centre (its mass is 0: it must only stay far away).
      const std::int64_t cc[3] = {c % cl.cells[0], (c / cl.cells[0]) % cl.cells[1],
                                  c / (std::int64_t(cl.cells[0]) * cl.cells[1])};
      CellMoment<Real> r{};
      for (int d = 0; d < Dim; ++d)
        r.c[d] = m > 0 ? Real(mx[d] / m) : Real(cl.origin[d] + (double(cc[d]) + 0.5) * cl.width[d]);
      r.c[Dim] = Real(m);
      mom_[std::size_t(c)] = r;
    }
  }

  void publish(CellList& cl, const CellPlan& plan) {
    if (plan.verlet && plan.half) {
      threads_ = std::max(1, omp_get_max_threads());
      scratch_.resize(std::size_t(threads_) * 8 * order_.size());
    }
    cl.scratch = plan.verlet && plan.half ? scratch_.data() : nullptr;
    cl.scratch_threads = plan.verlet && plan.half ? threads_ : 0;
    cl.n = order_.size();
    cl.cutoff = plan.cutoff;
    cl.range = plan.range;
    cl.order = order_.data();
    cl.cell_start = start_.data();
    cl.cell_end = end_.data();
    cl.pos = pos_.data();
    cl.type = type_.data();
    cl.verlet = plan.verlet;
    cl.half = plan.verlet && plan.half;
    cl.nl_count = plan.verlet ? count_.data() : nullptr;
    cl.nl = plan.verlet ? nl_.data() : nullptr;
    cl.nl_row = capacity_;
    cl.nl_col = 1;
    cl.nl_capacity = capacity_;
    cl.far = plan.far;
    cl.near = plan.near;
    cl.cell_mom = plan.far ? mom_.data() : nullptr;
    cl.builds = builds_;
  }

  std::vector<std::uint32_t> key_, order_, start_, end_, count_, nl_;
  std::vector<std::int32_t> type_;
  std::vector<Rec> pos_, ref_;
  std::vector<CellMoment<Real>> mom_;
  std::vector<Real> scratch_;
  int threads_ = 1;
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
         a.max_cells == b.max_cells;
}
}  // namespace

bool CellListBuilder::update(const ParticleStore& s, const Box& box, const CellListOptions& opt) {
  Impl& m = *impl_;
  const int dim = s.dim();
  if (!(opt.cutoff > 0))
    throw Error("cell_list: the interaction range must be positive (got " +
                std::to_string(opt.cutoff) + ")");
  if (!(opt.skin >= 0) || !std::isfinite(opt.skin))
    throw Error("cell_list: skin must be a finite length >= 0 (got " + std::to_string(opt.skin) +
                ")");
  if (opt.near < 1) throw Error("cell_list: near must be at least 1 ring of cells");

  detail::CellPlan plan;
  plan.far = !std::isfinite(opt.cutoff);
  plan.cutoff = opt.cutoff;
  plan.near = opt.near;
  plan.max_cells = opt.max_cells ? opt.max_cells : 2 * s.size() + 1024;
  if (plan.far) {
    for (int d = 0; d < dim; ++d)
      if (box.boundary[d] == Boundary::Periodic)
        throw Error("cell_list far zones (a long-range law) need open or walled axes: axis " +
                    std::to_string(d) +
                    " is periodic; use scheme \"all_pairs\" (minimum image) or make the axis a "
                    "wall");
    plan.verlet = false;
    plan.range = std::numeric_limits<double>::infinity();
    plan.min_width = opt.cell_size;
    plan.target_cells = std::sqrt(std::pow(2.0 * opt.near + 1, dim) * double(s.size()));
  } else {
    plan.verlet = opt.neighbour_list;
    plan.half = plan.verlet && opt.half_list && s.backend() == Backend::Cpu;
    plan.range = plan.verlet ? opt.cutoff + opt.skin : opt.cutoff;
    if (opt.cell_size > 0 && opt.cell_size < plan.range)
      throw Error("cell_list: cell_size = " + std::to_string(opt.cell_size) +
                  " is smaller than the range it must cover (cut-off + skin = " +
                  std::to_string(plan.range) + "); raise cell_size or leave it out");
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
    if (s.backend() == Backend::Cuda) {
#if defined(PARDYN_HAVE_CUDA)
      m.engine = detail::make_cuda_cell_engine();
#else
      throw Error("cell_list: this pardyn was built without CUDA; use backend = \"cpu\"");
#endif
    } else {
      m.engine = detail::make_cpu_cell_engine();
    }
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
