// SPDX-License-Identifier: BSD-3-Clause
// rdf: the pair counting of the radial distribution function, on the store's backend. The cell
// list (cell edge >= r_max, no neighbour list) gives every pair closer than r_max through the
// 3^dim cells around each particle's cell (for_each_stencil_cell); each pair is counted once (from
// its lower slot) into the histogram of its type pair by the framework's histogram loop
// (histogram_over_index, reduce.hpp). Only the histogram comes to the host.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::plugins::rdf {

// What the counters need: bins of width r_max / bins on [0, r_max), `types` particle types
// (0 .. types - 1), one histogram per unordered type pair.
struct CountSetup {
  double r_max = 1;
  int bins = 1;
  int types = 1;
  int columns() const { return types * (types + 1) / 2; }
};

// The histogram column of the type pair (a, b), a <= b: (0,0), (0,1), ..., (0,T-1), (1,1), ...
PARDYN_HD inline int pair_column(int a, int b, int types) {
  return a * types - a * (a - 1) / 2 + (b - a);
}

// Where the pair (xi, ti), (xj, tj) goes: the histogram entry column * bins + bin of its
// separation (minimum image on periodic axes), or -1 when it is not closer than r_max
// (rmax2 = r_max^2, inv_dr = bins / r_max). One function for the CPU loop and the GPU kernel.
template <int Dim, class Real>
PARDYN_HD PARDYN_INLINE int pair_entry(const CellParticle<Real>& xi, int ti,
                                       const CellParticle<Real>& xj, int tj,
                                       const PeriodicImage<Real>& img, Real rmax2, Real inv_dr,
                                       int bins, int types) {
  Real r2 = 0;
  for (int d = 0; d < Dim; ++d) {
    const Real dx = img.wrap(xi.c[d] - xj.c[d], d);
    r2 += dx * dx;
  }
  if (!(r2 < rmax2)) return -1;
#if defined(__CUDA_ARCH__)
  const int b = int(sqrt(r2) * inv_dr);
#else
  const int b = int(std::sqrt(r2) * inv_dr);
#endif
  const int col = ti <= tj ? pair_column(ti, tj, types) : pair_column(tj, ti, types);
  return col * bins + (b < bins - 1 ? b : bins - 1);
}

// Every partner j > k of slot k in the cells of the stencil st (one cell ring around k's cell:
// stencil_around(cl, c, 1)) closer than r_max: add(entry) with pair_entry's histogram entry. Each
// pair is counted once, from its lower slot. One loop for the CPU and the GPU.
template <int Dim, class Real, class Add>
PARDYN_HD PARDYN_INLINE void count_partners(const CellList& cl, std::uint32_t k,
                                            const CellParticle<Real>& xi, int ti,
                                            const CellStencil& st, const PeriodicImage<Real>& img,
                                            Real rmax2, Real inv_dr, int bins, int types,
                                            Add&& add) {
  const CellParticle<Real>* __restrict__ pos = cl.positions<Real>();
  const std::int32_t* __restrict__ type = cl.type;
  for_each_stencil_cell<Dim>(cl, st, [&](std::size_t nb) PARDYN_INLINE_LAMBDA {
    const std::uint32_t je = cl.cell_end[nb];
    std::uint32_t j = cl.cell_start[nb];
    if (j <= k) j = k + 1;
    for (; j < je; ++j) {
      const int e = pair_entry<Dim>(xi, ti, pos[j], type[j], img, rmax2, inv_dr, bins, types);
      if (e >= 0) add(e);
    }
  });
}

// The pairs counted into the histogram, each from its lower slot: the functor of
// histogram_over_index (reduce.hpp). ByCell: an item is a cell, whose slots share its stencil (the
// CPU's loop: the stencil found once per cell); else an item is a slot (the GPU's: one thread per
// particle). The cell list was built with cutoff >= r_max (rmax2 = r_max^2, inv_dr = bins / r_max).
template <int Dim, class Real, bool ByCell>
struct CountPairs {
  CellList cl;
  PeriodicImage<Real> img;
  Real rmax2, inv_dr;
  int bins, types;
  template <class Counts>
  PARDYN_HD void operator()(std::size_t item, Counts& c) const {
    const CellParticle<Real>* pos = cl.positions<Real>();
    const auto add = [&](int e) PARDYN_INLINE_LAMBDA { c.add(e); };
    int cc[3];
    if (ByCell) {
      const std::uint32_t kb = cl.cell_start[item], ke = cl.cell_end[item];
      if (kb == ke) return;
      cl.cell_coords(item, cc);
      const CellStencil st = stencil_around<Dim>(cl, cc, 1);
      for (std::uint32_t k = kb; k < ke; ++k)
        count_partners<Dim>(cl, k, pos[k], cl.type[k], st, img, rmax2, inv_dr, bins, types, add);
    } else {
      const CellParticle<Real> xi = pos[item];
      cl.cell_coords_at<Dim>(xi.c, cc);
      count_partners<Dim>(cl, std::uint32_t(item), xi, cl.type[item],
                          stencil_around<Dim>(cl, cc, 1), img, rmax2, inv_dr, bins, types, add);
    }
  }
};

// Adds every pair of the cell list cl of the store's particles closer than s.r_max to
// hist[column * bins + bin] (hist: s.columns() * s.bins host values), on the store's backend.
void count_pairs(const ParticleStore& store, const CellList& cl, const Box& box,
                 const CountSetup& s, std::vector<std::uint64_t>& hist);

}  // namespace pardyn::plugins::rdf
