// SPDX-License-Identifier: BSD-3-Clause
// LAMMPS's conventions, shared by the lammps_data and lammps_dump plugins: the box bounds LAMMPS
// files carry and the boundary letters of its `boundary` command (p periodic; f fixed, which
// pardyn's walls are; s and m shrink-wrapped, which pardyn's open axes are).
//
// Header-only: each plugin compiles its own copy.
#pragma once

#include <algorithm>
#include <string_view>

#include "pardyn/box.hpp"
#include "trajectory.hpp"

namespace pardyn::plugins::lammps {

// The letter of an axis in LAMMPS's terms: p, f or m (a 2D run's z axis: p, as LAMMPS's 2D boxes).
inline char letter(const Box& box, int d, int dim) {
  if (d >= dim) return 'p';
  switch (box.boundary[d]) {
    case Boundary::Periodic: return 'p';
    case Boundary::Wall: return 'f';
    default: return 'm';
  }
}

// The boundary a LAMMPS letter stands for; false for a letter that is none of p, f, s, m.
inline bool boundary_of(char c, Boundary& b) {
  switch (c) {
    case 'p': b = Boundary::Periodic; return true;
    case 'f': b = Boundary::Wall; return true;
    case 's':
    case 'm': b = Boundary::Open; return true;
    default: return false;
  }
}

// The bounds a frame is written with: the [box] on periodic and walled axes; on open axes the box
// grown to hold every particle (LAMMPS's shrink-wrapping with a minimum, `m`); a 2D run's z from
// -0.5 to 0.5.
inline void frame_bounds(const Box& box, const trajectory::Frame& f, double lo[3], double hi[3]) {
  for (int d = 0; d < 3; ++d) {
    lo[d] = d < f.dim ? box.lo[d] : -0.5;
    hi[d] = d < f.dim ? box.hi[d] : 0.5;
    if (d >= f.dim || box.boundary[d] != Boundary::Open) continue;
    for (double x : f.x[d]) {
      lo[d] = std::min(lo[d], x);
      hi[d] = std::max(hi[d], x);
    }
  }
}

// " ix iy iz": particle i's image counts as LAMMPS writes them, 0 on the axes that are not periodic
// (and on those a dim-D run lacks).
inline void put_images(std::string& s, const Box& box, const trajectory::Frame& f, std::size_t i) {
  for (int d = 0; d < 3; ++d) {
    s += ' ';
    trajectory::put_int(s, d < f.dim && box.boundary[d] == Boundary::Periodic ? f.image[d][i] : 0);
  }
}

}  // namespace pardyn::plugins::lammps
