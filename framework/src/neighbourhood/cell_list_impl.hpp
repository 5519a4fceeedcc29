// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the backend halves of CellListBuilder (cell_list.cpp on the host,
// cell_list_cuda.cu on the GPU) and the host-side planning they share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cell_pyramid.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/comm.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::detail {

// What one update must do, decided on the host from the options and the previous call.
struct CellPlan {
  bool far = false;         // far zones (long-range law)
  bool verlet = false;      // build a Verlet list
  bool half = false;        // ... listing each pair once (CPU)
  bool force = false;       // rebuild whatever the displacements
  double cutoff = 0;        // pairs closer than this matter (infinite: far zones)
  double range = 0;         // what the list / stencil must cover: cutoff + skin (or cutoff)
  double half_skin2 = 0;    // rebuild when some particle moved more than this (squared)
  double min_width = 0;     // smallest cell edge (0: derive it from target_cells)
  double target_cells = 0;  // far zones without cell_size: cells wanted
  double floor_width = 0;   // far zones without cell_size: the smallest cell edge
  int near = 1;
  int rings = 2;           // far zones: the pyramid's rings (CellList::rings)
  bool quadrupole = true;  // far zones: cells' second moments too
  std::size_t max_cells = 0;
  // Far zones on several ranks (CellListOptions::comm): the ghosts' reach and the ranks.
  Comm* comm = nullptr;
  double ghost_reach = 0;
};

// Far zones without a cell size: particles per level-0 cell wanted.
constexpr double kFarParticlesPerCell = 8.0;

// Fills cl's grid (cells, origin, width, periodic, ncells) for the plan, the box and, for open
// axes, the particles' bounding box [bmin, bmax].
void plan_grid(CellList& cl, int dim, const Box& box, const CellPlan& plan, const double* bmin,
               const double* bmax);

// The far zones' part of a plan, for n_all particles (all ranks').
void plan_far(CellPlan& plan, const Box& box, int dim, std::size_t n_all,
              const CellListOptions& opt);
// The widest level-0 cell edge far zones on the walled box get for n_all particles.
double far_cell_width(const Box& box, int dim, std::size_t n_all, const CellListOptions& opt);

// Far zones on several ranks: the first pyramid level summed over the ranks (CellList::
// shared_level): the lowest level whose cells, at the ranges where the levels below it serve a
// target, are all within plan.ghost_reach of it. Throws when the ghosts cannot even hold the
// exact near zone. cl's pyramid must be planned.
int plan_shared_level(const CellList& cl, const CellPlan& plan);

// Sums the packed cell sums (CellSums::pack, kSumTerms per cell) over the ranks, in place.
void sum_over_ranks(const CellPlan& plan, double* sums, std::size_t n);

// The far zones' pyramid in the order both engines build it: its levels planned (and, on several
// ranks, the shared one chosen), room made (alloc()), level 0 from the particles (level0(); not
// when level 0 is shared), each level above from the one below (coarsen(l)), and from the shared
// level L on: L from the ranks' sums (shared(L)), the levels above from it.
template <class Alloc, class Level0, class Coarsen, class Shared>
void build_pyramid(CellList& cl, const CellPlan& plan, Alloc alloc, Level0 level0, Coarsen coarsen,
                   Shared shared) {
  plan_pyramid(cl, plan.rings);
  cl.shared_level = plan.comm ? plan_shared_level(cl, plan) : cl.levels;
  const int L = cl.shared_level;
  alloc();
  if (L > 0) level0();
  for (int l = 1; l < L; ++l) coarsen(l);
  if (L >= cl.levels) return;
  shared(L);
  for (int l = L + 1; l < cl.levels; ++l) coarsen(l);
}

class CellEngine {
 public:
  virtual ~CellEngine() = default;
  // Refreshes the sorted positions; rebuilds when plan.force or a particle moved too far. Returns
  // whether it rebuilt.
  virtual bool update(const ParticleStore& s, const Box& box, const CellPlan& plan,
                      CellList& cl) = 0;
};

// The two engines (cell_list.cpp, cell_list_cuda.cu; without CUDA, cuda_stub.cpp's stand-in says
// that this pardyn has no GPU).
std::unique_ptr<CellEngine> make_cpu_cell_engine();
std::unique_ptr<CellEngine> make_cuda_cell_engine();

// What both engines' publish() share: cl's fields the plan decides, and its arrays pointed at the
// engine's (a std::vector on the host, a CudaArray on the device: anything with data()), the
// Verlet list's and the pyramid's where the plan has them. The engine adds its list's layout.
template <class Index, class Pos, class Types, class Mom, class Quad>
void publish_cells(CellList& cl, const CellPlan& plan, std::size_t n, std::size_t capacity,
                   std::uint64_t builds, const Index& order, const Index& start, const Index& end,
                   const Pos& pos, const Types& type, const Index& count, const Index& nl,
                   const Mom& mom, const Quad& quad) {
  cl.n = n;
  cl.cutoff = plan.cutoff;
  cl.range = plan.range;
  cl.order = order.data();
  cl.cell_start = start.data();
  cl.cell_end = end.data();
  cl.pos = pos.data();
  cl.type = type.data();
  cl.verlet = plan.verlet;
  cl.nl_count = plan.verlet ? count.data() : nullptr;
  cl.nl = plan.verlet ? nl.data() : nullptr;
  cl.nl_capacity = capacity;
  cl.far = plan.far;
  cl.near = plan.near;
  cl.cell_mom = plan.far ? mom.data() : nullptr;
  cl.cell_quad = plan.far && plan.quadrupole ? quad.data() : nullptr;
  cl.builds = builds;
}

}  // namespace pardyn::detail
