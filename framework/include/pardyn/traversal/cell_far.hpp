// SPDX-License-Identifier: BSD-3-Clause
// The cell list's far zones: what one target particle receives from the cells outside its exact
// near zone, through the pyramid of cells (CellList::levels). Host/device: the CPU traversal
// (cell_list_cpu.hpp) and the GPU kernel (cell_list_cuda.cuh) call the same function.
//
// The pyramid: level 0 is the grid; a cell of level l + 1 holds the (up to) 2^dim cells of level l
// below it, with their total mass, centre of mass and second moments. For a target in level-0 cell
// c (c_l = c >> l its cell at level l), level l serves the cells whose parent lies within `rings`
// cells of c_{l+1} (all cells at the top level) but which are not within e_l cells of c_l
// (e_0 = near, e_l = rings above). Those are exactly the cells that no finer level serves: with
// e_l <= 2 rings, a cell within e_l of c_l has its parent within rings of c_{l+1}. So every level-0
// cell outside the near zone is counted once, at the coarsest level where it is still separated
// from the target by `rings` cells of that level (seed 003's near / middle / far zones, made
// hierarchical). Each level costs at most (4 rings + 2)^dim cells per target, so a force
// evaluation costs O(N log N) however many cells there are.
//
// Accuracy: a served cell of level l >= 1 is at least `rings` cells of its own size away from the
// target's cell (the opening angle ~ 1 / rings); level 0's nearest served cells are `near` cells
// away. Quadrupoles make the error fall as (size / distance)^3 instead of ^2. docs/real-gas.md
// gives the measured force errors.
#pragma once

#include "pardyn/cell_list.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn {

template <bool Energy, bool Quad, class Eval, class Real, int Dim>
PARDYN_HD PARDYN_INLINE void cell_far_sum(const Eval& ev, const CellList& cl, const Real* xi,
                                          const int (&c0)[3], Real (&acc)[3], Real& ep, Real& vr) {
  constexpr int NQ = kQuadTerms<Dim>;
  const CellMoment<Real>* __restrict__ mom = cl.moments<Real>();
  const Real* __restrict__ quad = static_cast<const Real*>(cl.cell_quad);
  const int top = cl.levels - 1;
  for (int l = 0; l <= top; ++l) {
    const int ex = l == 0 ? cl.near : cl.rings;
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, elo[3] = {0, 0, 0}, ehi[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) {
      const int c = c0[d] >> l;
      const int nc = cl.level_cells[l][d];
      if (l < top) {
        const int parent = c >> 1;
        lo[d] = 2 * (parent - cl.rings);
        hi[d] = 2 * (parent + cl.rings) + 1;
        lo[d] = lo[d] < 0 ? 0 : lo[d];
        hi[d] = hi[d] > nc - 1 ? nc - 1 : hi[d];
      } else {
        hi[d] = nc - 1;
      }
      elo[d] = c - ex;
      ehi[d] = c + ex;
    }
    const int n0 = cl.level_cells[l][0], n1 = cl.level_cells[l][1];
    const std::size_t off = cl.level_offset[l];
    for (int a2 = lo[2]; a2 <= hi[2]; ++a2)
      for (int a1 = lo[1]; a1 <= hi[1]; ++a1) {
        // The row's cells outside the excluded block: one run, or two around the block.
        const bool row_in =
            a1 >= elo[1] && a1 <= ehi[1] && (Dim < 3 || (a2 >= elo[2] && a2 <= ehi[2]));
        const std::size_t row =
            off + (std::size_t(a2) * std::size_t(n1) + std::size_t(a1)) * std::size_t(n0);
        for (int part = 0; part < (row_in ? 2 : 1); ++part) {
          int b = lo[0], e = hi[0];
          if (row_in) {
            if (part == 0) e = elo[0] - 1 < e ? elo[0] - 1 : e;
            else b = ehi[0] + 1 > b ? ehi[0] + 1 : b;
          }
          for (int a0 = b; a0 <= e; ++a0) {
            const std::size_t idx = row + std::size_t(a0);
            const CellMoment<Real> r = mom[idx];
            const Real M = record_mass<Dim>(r);
            if (!(M > Real(0))) continue;  // empty cells
            const Real d[3] = {xi[0] - r.c[0], xi[1] - r.c[1], Dim == 3 ? xi[2] - r.c[2] : Real(0)};
            far_multipole<Dim, Quad, Energy>(ev, d, M, Quad ? quad + NQ * idx : nullptr, acc, ep,
                                             vr);
          }
        }
      }
  }
}

}  // namespace pardyn
