// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the far zones' cell pyramid (traversal/cell_far.hpp) as both cell-list
// engines build it. The levels are planned on the host; a cell's mass, centre of mass and second
// moments come from its particles (level 0) or from its children (levels above) through the same
// host/device sums, so the CPU and the GPU compute them alike.
#pragma once

#include <algorithm>
#include <cstddef>

#include "pardyn/cell_list.hpp"
#include "pardyn/core.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn::detail {

// Fills the levels of cl's pyramid above its grid: each halves the cells per axis (rounding up),
// until a level has at most 4 rings + 2 cells per axis (the top, served whole).
inline void plan_pyramid(CellList& cl, int rings) {
  const int top_width = 4 * rings + 2;
  cl.rings = rings;
  int l = 0;
  for (int d = 0; d < 3; ++d) cl.level_cells[0][d] = cl.cells[d];
  cl.level_offset[0] = 0;
  std::size_t total = cl.ncells;
  for (;;) {
    int widest = 0;
    for (int d = 0; d < cl.dim; ++d) widest = std::max(widest, cl.level_cells[l][d]);
    if (widest <= top_width || l + 1 >= CellList::kMaxLevels) break;
    ++l;
    std::size_t n = 1;
    for (int d = 0; d < 3; ++d) {
      cl.level_cells[l][d] = d < cl.dim ? (cl.level_cells[l - 1][d] + 1) / 2 : 1;
      n *= std::size_t(cl.level_cells[l][d]);
    }
    cl.level_offset[l] = total;
    total += n;
  }
  cl.levels = l + 1;
  cl.pyramid_cells = total;
}

template <int Dim>
constexpr int kSumTerms = 1 + Dim + kQuadTerms<Dim>;

// Sums over the particles (or child cells) of one cell, relative to the cell's geometric centre
// `ref` (so that float positions far from the origin keep their digits), in double.
template <int Dim>
struct CellSums {
  double m = 0;
  double mx[3] = {0, 0, 0};
  double mxx[6] = {0, 0, 0, 0, 0, 0};  // xx, yy, zz, xy, xz, yz (3D); xx, yy, xy (2D)

  PARDYN_HD void add_point(double mass, const double (&y)[3]) {
    m += mass;
    for (int d = 0; d < Dim; ++d) mx[d] += mass * y[d];
    if constexpr (Dim == 3) {
      mxx[0] += mass * y[0] * y[0], mxx[1] += mass * y[1] * y[1], mxx[2] += mass * y[2] * y[2];
      mxx[3] += mass * y[0] * y[1], mxx[4] += mass * y[0] * y[2], mxx[5] += mass * y[1] * y[2];
    } else {
      mxx[0] += mass * y[0] * y[0], mxx[1] += mass * y[1] * y[1], mxx[2] += mass * y[0] * y[1];
    }
  }
  // A child cell: its mass at its centre of mass plus its own second moments (parallel axes).
  template <class Real>
  PARDYN_HD void add_cell(const CellMoment<Real>& r, const Real* q, const double* ref) {
    const double M = double(record_mass<Dim>(r));
    if (!(M > 0)) return;
    double y[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) y[d] = double(r.c[d]) - ref[d];
    add_point(M, y);
    if (q)
      for (int k = 0; k < kQuadTerms<Dim>; ++k) mxx[k] += double(q[k]);
  }
  template <class Real>
  PARDYN_HD void add_particle(const CellParticle<Real>& r, const double* ref) {
    double y[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) y[d] = double(r.c[d]) - ref[d];
    add_point(double(record_mass<Dim>(r)), y);
  }
  // The sums as kSumTerms<Dim> doubles (m, mx[Dim], mxx[kQuadTerms]): what the ranks add up.
  PARDYN_HD void pack(double* out) const {
    out[0] = m;
    for (int d = 0; d < Dim; ++d) out[1 + d] = mx[d];
    for (int k = 0; k < kQuadTerms<Dim>; ++k) out[1 + Dim + k] = mxx[k];
  }
  PARDYN_HD void unpack(const double* in) {
    m = in[0];
    for (int d = 0; d < Dim; ++d) mx[d] = in[1 + d];
    for (int k = 0; k < kQuadTerms<Dim>; ++k) mxx[k] = in[1 + Dim + k];
  }
  PARDYN_HD void add(const CellSums& o) {
    m += o.m;
    for (int d = 0; d < 3; ++d) mx[d] += o.mx[d];
    for (int k = 0; k < 6; ++k) mxx[k] += o.mxx[k];
  }
  // The cell's record (an empty cell sits at its centre with mass 0) and, with q, its second
  // moments about the centre of mass.
  template <class Real>
  PARDYN_HD void finish(const double* ref, CellMoment<Real>& out, Real* q) const {
    double Y[3] = {0, 0, 0};
    if (m > 0)
      for (int d = 0; d < Dim; ++d) Y[d] = mx[d] / m;
    CellMoment<Real> r{};
    for (int d = 0; d < Dim; ++d) r.c[d] = Real(ref[d] + Y[d]);
    r.c[Dim] = Real(m);
    out = r;
    if (q) {
      if constexpr (Dim == 3) {
        q[0] = Real(mxx[0] - m * Y[0] * Y[0]), q[1] = Real(mxx[1] - m * Y[1] * Y[1]);
        q[2] = Real(mxx[2] - m * Y[2] * Y[2]), q[3] = Real(mxx[3] - m * Y[0] * Y[1]);
        q[4] = Real(mxx[4] - m * Y[0] * Y[2]), q[5] = Real(mxx[5] - m * Y[1] * Y[2]);
      } else {
        q[0] = Real(mxx[0] - m * Y[0] * Y[0]), q[1] = Real(mxx[1] - m * Y[1] * Y[1]);
        q[2] = Real(mxx[2] - m * Y[0] * Y[1]);
      }
    }
  }
};

// The geometric centre of cell (i0, i1, i2) of level l.
template <int Dim>
PARDYN_HD PARDYN_INLINE void level_cell_centre(const CellList& cl, int l, const int (&i)[3],
                                               double (&c)[3]) {
  for (int d = 0; d < 3; ++d) c[d] = 0;
  for (int d = 0; d < Dim; ++d)
    c[d] = cl.origin[d] + (double(i[d]) + 0.5) * cl.width[d] * double(1 << l);
}

// The coordinates of cell number c (within its level) of a level with cells n[0..2] per axis.
PARDYN_HD PARDYN_INLINE void level_cell_coords(std::size_t c, const int (&n)[3], int (&i)[3]) {
  i[0] = int(c % std::size_t(n[0]));
  i[1] = int((c / std::size_t(n[0])) % std::size_t(n[1]));
  i[2] = int(c / (std::size_t(n[0]) * std::size_t(n[1])));
}

// Cell c of level l (l >= 1) from its children at level l - 1.
template <class Real, int Dim>
PARDYN_HD PARDYN_INLINE void coarsen_cell(const CellList& cl, int l, std::size_t c,
                                          CellMoment<Real>* mom, Real* quad) {
  constexpr int NQ = kQuadTerms<Dim>;
  const int(&n)[3] = cl.level_cells[l];
  const int(&nf)[3] = cl.level_cells[l - 1];
  int i[3];
  level_cell_coords(c, n, i);
  double ref[3];
  level_cell_centre<Dim>(cl, l, i, ref);
  CellSums<Dim> s;
  const int z1 = Dim == 3 ? 2 : 1;
  for (int a2 = 0; a2 < z1; ++a2)
    for (int a1 = 0; a1 < 2; ++a1)
      for (int a0 = 0; a0 < 2; ++a0) {
        const int j0 = 2 * i[0] + a0, j1 = 2 * i[1] + a1, j2 = Dim == 3 ? 2 * i[2] + a2 : 0;
        if (j0 >= nf[0] || j1 >= nf[1] || j2 >= nf[2]) continue;
        const std::size_t f =
            cl.level_offset[l - 1] +
            (std::size_t(j2) * std::size_t(nf[1]) + std::size_t(j1)) * std::size_t(nf[0]) +
            std::size_t(j0);
        s.add_cell(mom[f], quad ? quad + NQ * f : static_cast<const Real*>(nullptr), ref);
      }
  const std::size_t out = cl.level_offset[l] + c;
  s.finish(ref, mom[out], quad ? quad + NQ * out : static_cast<Real*>(nullptr));
}

// Far zones on several ranks: level-0 cell number j (0 .. 2^(L dim) - 1) of the block under cell
// (i0, i1, i2) of level L, as a linear level-0 index; false where the block is clipped by the grid.
template <int Dim>
PARDYN_HD PARDYN_INLINE bool block_cell(const CellList& cl, int L, const int (&i)[3], std::size_t j,
                                        std::size_t& cell) {
  const std::size_t side = std::size_t(1) << L;
  int a[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d) {
    a[d] = int(std::size_t(i[d]) * side + j % side);
    j /= side;
    if (a[d] >= cl.cells[d]) return false;
  }
  cell = cl.cell_index(a[0], a[1], a[2]);
  return true;
}

// The rank's own particles (store index < n_targets; not the ghosts) of level-0 cell `cell`,
// added to the sums of their level-L cell about its centre `ref`.
template <class Real, int Dim>
PARDYN_HD PARDYN_INLINE void add_own_particles(const CellList& cl, std::size_t cell,
                                               const double* ref, CellSums<Dim>& s) {
  const CellParticle<Real>* pos = cl.positions<Real>();
  for (std::uint32_t k = cl.cell_start[cell]; k < cl.cell_end[cell]; ++k)
    if (cl.order[k] < cl.n_targets) s.add_particle(pos[k], ref);
}

// The record (and second moments) of cell c of the shared level L from its sums over all ranks.
template <class Real, int Dim>
PARDYN_HD PARDYN_INLINE void finish_shared_cell(const CellList& cl, int L, std::size_t c,
                                                const double* sums, CellMoment<Real>* mom,
                                                Real* quad) {
  constexpr int NQ = kQuadTerms<Dim>;
  int i[3];
  level_cell_coords(c, cl.level_cells[L], i);
  double ref[3];
  level_cell_centre<Dim>(cl, L, i, ref);
  CellSums<Dim> s;
  s.unpack(sums + kSumTerms<Dim> * c);
  const std::size_t out = cl.level_offset[L] + c;
  s.finish(ref, mom[out], quad ? quad + NQ * out : static_cast<Real*>(nullptr));
}

}  // namespace pardyn::detail
