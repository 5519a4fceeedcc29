// SPDX-License-Identifier: BSD-3-Clause
// The cell-list neighbourhood: what the cell_list scheme builds and the cell-list traversals read,
// and the builder that makes it (in libpardyn, so that analyses can use it too).
//
// The particles are binned into a grid of cells whose edge is at least the interaction range, and
// *sorted by cell*: slot k of the sorted order holds store particle order[k], and the slots of cell
// c are [cell_start[c], cell_end[c]). The store itself is never permuted (integrators keep state
// across force evaluations); at every update the builder gathers the positions and masses into
// `pos` in sorted order, and traversals write each target's sums back to store index order[k].
//
// Three ways to use it:
//   - cut-off laws, with the Verlet list (skin > 0): the neighbours of every slot (all slots
//     j closer than cutoff + skin at the last rebuild; each pair from both sides, or with
//     half_list once), rebuilt automatically when some particle has moved more than skin / 2;
//   - cut-off laws without a list (skin = 0): the traversal visits the 3^dim cells around
//     each cell;
//   - long-range laws with a far-field form (far zones, seed 003): particles in the `near` rings of
//     cells around a particle's cell interact exactly, every other cell through its mass and centre
//     of mass (`cell_mom`, refreshed at every update).
//
// Reuse outside the scheme ("for each particle, the particles within distance r", e.g. clusters):
//
//     CellListBuilder b;
//     CellListOptions o;  o.cutoff = r;  o.skin = 0;  o.neighbour_list = true;
//     b.update(store, box, o);                 // on the store's backend (host or device memory)
//     const CellList& cl = b.list();
//     // slot k = 0 .. n-1 is store particle cl.order[k]; its neighbours (slots closer than r,
//     // itself excluded, every pair listed from both sides) are cl.neighbour(k, m) for
//     // m < cl.nl_count[k].
//
// All arrays live in the store's backend memory (device memory for a CUDA store): read them in a
// kernel or copy them to the host. They stay valid until the next update() or the builder's end.
//
// Device-clean (docs/plugins.md): the structure and the stencil walks are plain data and host/device
// functions; the builder and the host-side checks are left out of run-time compiled device code.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#if !defined(__CUDACC_RTC__)
#include <memory>
#include <string>
#endif

#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn {

class Comm;           // pardyn/comm.hpp
class ParticleStore;  // pardyn/particles.hpp

// A sorted particle as the traversals read it: {x, y, z, m} in 3D, {x, y, m, 0} in 2D.
template <class Real>
struct alignas(4 * sizeof(Real)) CellParticle {
  Real c[4];
};
// A cell's mass and centre of mass (far zones): {X, Y, Z, M} in 3D, {X, Y, M, 0} in 2D.
template <class Real>
using CellMoment = CellParticle<Real>;

template <int Dim, class Real>
PARDYN_HD PARDYN_INLINE Real record_mass(const CellParticle<Real>& r) {
  return r.c[Dim];
}

// The team of threads that runs a half Verlet list's force loop on the CPU
// (traversal/cell_list_cpu.hpp). The loop's rows are cut into `ranges` fixed parts
// (CellList::scratch_threads), each summed into its own buffer, and the buffers are added in a fixed
// order, so the forces do not depend on how many threads share the parts. This picks that number from
// the loop's own times: every `period` timed calls it tries the next smaller (or larger) team for
// kTrial calls and keeps it if its fastest call beat the current team's fastest of its last kTrial
// calls by 5 % (a trial call 25 % slower than that ends the trial at once); `period` doubles (up to
// kMaxPeriod) after each trial that does not change the team. On a node whose cores
// other jobs keep busy, where every wake-up of a second thread waits for the scheduler, the loop so
// falls back to fewer threads, and goes back when the cores are free (docs/performance.md, "Threads
// on a shared node").
struct HalfListTeam {
  static constexpr int kTrial = 3;
  static constexpr int kFirstPeriod = 5;
  static constexpr int kMaxPeriod = 1600;
  int ranges = 1;  // the list's parts (CellList::scratch_threads)
  int team = 1;    // threads that run them now
  int fixed = 0;   // > 0: always this team (tests, benchmarks)
  int period = kFirstPeriod;
  int calls = 0;                      // timed calls of `team` since the last trial
  int trial = 0;                      // the team on trial (0: none)
  int trial_calls = 0;                // its calls so far
  int down = 1;                       // the next trial's direction: 1 smaller, 0 larger
  double recent[kTrial] = {0, 0, 0};  // the current team's last timed calls (seconds)
  double trial_best = 0;

  // A new list with `parts` ranges: everything starts again (all threads first).
  void reset(int parts) {
    const int keep = fixed;
    *this = HalfListTeam{};
    fixed = keep;
    ranges = team = parts < 1 ? 1 : parts;
  }
  // The team for the next call (timed: a call whose time may steer the choice).
  int next(bool timed) {
    if (fixed > 0) return fixed < ranges ? fixed : ranges;
    if (!timed || ranges < 2) return team;
    if (trial == 0 && calls >= period && calls >= kTrial) {
      const int smaller = team > 1 ? team / 2 : 0,
                larger = team < ranges ? (team * 2 < ranges ? team * 2 : ranges) : 0;
      trial = (down && smaller) || !larger ? smaller : larger;
      down = !down;
      trial_calls = 0;
      trial_best = 0;
    }
    return trial ? trial : team;
  }
  // The time of the call that next(true) chose the team for.
  void done(double seconds) {
    if (fixed > 0 || ranges < 2) return;
    if (trial) {
      double best = recent[0];
      for (double r : recent) best = r < best ? r : best;
      trial_best = trial_calls == 0 || seconds < trial_best ? seconds : trial_best;
      ++trial_calls;
      const bool lost = seconds > 1.25 * best;  // clearly slower: no need to see more calls
      if (!lost && trial_calls < kTrial) return;
      if (!lost && trial_best < 0.95 * best) team = trial;
      else period = period * 2 < kMaxPeriod ? period * 2 : kMaxPeriod;
      trial = 0;
      calls = 0;
      return;
    }
    recent[calls % kTrial] = seconds;
    ++calls;
  }
};

struct CellList {
  // --- the grid ---
  int dim = 3;
  int cells[3] = {1, 1, 1};  // cells per axis (1 on the third axis in 2D)
  double origin[3] = {0, 0, 0};
  double width[3] = {1, 1, 1};  // cell edge per axis, >= the range (or cell_size, far zones)
  double inv_width[3] = {1, 1, 1};
  bool periodic[3] = {false, false, false};
  std::size_t ncells = 1;
  std::size_t n = 0;  // particles (slots)
  // Store particles [0, n_targets) are targets; slots of the others (ghosts) may be left without
  // a neighbour list (the GPU's full list does so: their rows are empty).
  std::size_t n_targets = 0;
  double cutoff = 0;  // the interaction range asked for (infinity: far zones)
  double range = 0;   // what the list / stencil guarantees: cutoff + skin (cutoff without a list)

  // --- the sorted order (backend memory) ---
  const std::uint32_t* order = nullptr;       // [n] store index of slot k
  const std::uint32_t* cell_start = nullptr;  // [ncells] first slot of cell c
  const std::uint32_t* cell_end = nullptr;    // [ncells] one past its last slot
  const void* pos = nullptr;                  // [n] CellParticle<Real> in the store's precision
  const std::int32_t* type = nullptr;         // [n] types in sorted order
  bool one_type = false;                      // every particle has the same type (type[0])

  // --- the Verlet list, in slots: full (each pair from both sides), or with `half` each pair once,
  // in the row of its lower slot (CPU only: traversals then use Newton's third law) ---
  bool verlet = false;
  bool half = false;
  const std::uint32_t* nl_count = nullptr;  // [n]
  const std::uint32_t* nl = nullptr;        // neighbour m of slot k: nl[k * nl_row + m * nl_col]
  std::size_t nl_row = 0, nl_col = 0;       // host: row-major (nl_col = 1); device: transposed
  std::size_t nl_capacity = 0;              // neighbours per slot the list has room for
  // Half lists: the sums of the traversal's ranges of rows, [scratch_threads][n][8] values of the
  // store's precision (owned by the builder, host memory); one range per thread of a full team.
  void* scratch = nullptr;
  int scratch_threads = 0;
  // Half lists: how many threads run those per-thread ranges now (owned by the builder; host only).
  HalfListTeam* team = nullptr;

  // --- far zones: a pyramid of cells (level 0: the grid; each level above halves the cells per
  // axis, a cell of level l + 1 holding up to 2^dim cells of level l) ---
  static constexpr int kMaxLevels = 24;
  bool far = false;
  int near = 1;    // rings of level-0 cells around a particle's cell that interact exactly
  int rings = 2;   // levels >= 1: rings of cells around the target's cell that the level leaves to
                   // the levels below (the opening criterion: larger is more accurate)
  int levels = 0;  // pyramid levels
  int level_cells[kMaxLevels][3] = {};        // cells per axis of each level
  std::size_t level_offset[kMaxLevels] = {};  // first cell of level l in cell_mom / cell_quad
  std::size_t pyramid_cells = 0;              // cells of all levels
  const void* cell_mom = nullptr;   // [pyramid_cells] CellMoment<Real>: centre of mass and mass
  const void* cell_quad = nullptr;  // [pyramid_cells][kQuadTerms<dim>] second moments, or null
  // Far zones on several ranks (CellListOptions::comm): the first level summed over the ranks
  // (levels below it come from this rank's particles and ghosts); `levels` in a serial run.
  int shared_level = 0;

  // --- statistics ---
  std::uint64_t builds = 0;   // rebuilds (sorts) so far
  std::uint64_t updates = 0;  // calls of update()

  template <class Real>
  PARDYN_HD const CellParticle<Real>* positions() const {
    return static_cast<const CellParticle<Real>*>(pos);
  }
  template <class Real>
  PARDYN_HD const CellMoment<Real>* moments() const {
    return static_cast<const CellMoment<Real>*>(cell_mom);
  }
  PARDYN_HD std::uint32_t neighbour(std::size_t k, std::size_t m) const {
    return nl[k * nl_row + m * nl_col];
  }
  // Linear index of the cell at integer coordinates (already inside the grid).
  PARDYN_HD std::size_t cell_index(int c0, int c1, int c2) const {
    return (std::size_t(c2) * std::size_t(cells[1]) + std::size_t(c1)) * std::size_t(cells[0]) +
           std::size_t(c0);
  }
  // The integer coordinates of the cell of linear index `cell` (cell_index's inverse).
  PARDYN_HD void cell_coords(std::size_t cell, int (&c)[3]) const {
    c[0] = int(cell % std::size_t(cells[0]));
    c[1] = int((cell / std::size_t(cells[0])) % std::size_t(cells[1]));
    c[2] = int(cell / (std::size_t(cells[0]) * std::size_t(cells[1])));
  }
  // The integer coordinates of the cell holding position x (x[0 .. Dim)): coordinate() per axis,
  // 0 on the axes beyond Dim.
  template <int Dim, class Real>
  PARDYN_HD void cell_coords_at(const Real* x, int (&c)[3]) const {
    c[0] = c[1] = c[2] = 0;
    for (int d = 0; d < Dim; ++d) c[d] = coordinate(x[d], d);
  }
  // The cell coordinate of position x along axis d: periodic axes wrap, others clamp into the grid
  // (a particle beyond the grid's edge goes to the edge cell, which keeps every pair within reach).
  template <class Real>
  PARDYN_HD int coordinate(Real x, int d) const {
    return cell_at(grid_position(x, d), d);
  }
  // Position x along axis d in cell widths from the grid's origin, wrapped into [0, cells) on
  // periodic axes, not clamped elsewhere.
  template <class Real>
  PARDYN_HD Real grid_position(Real x, int d) const {
    Real f = (x - Real(origin[d])) * Real(inv_width[d]);
    const int nc = cells[d];
    if (periodic[d]) f -= Real(nc) * floor(f / Real(nc));
    return f;
  }
  // The cell coordinate of grid position f along axis d, clamped into the grid.
  template <class Real>
  PARDYN_HD int cell_at(Real f, int d) const {
    const int nc = cells[d];
    // Clamp in floating point first so that a far-away particle cannot overflow the int (and a NaN
    // lands in cell 0 instead of anywhere).
    f = f >= Real(0) ? f : Real(0);
    f = f <= Real(nc) ? f : Real(nc);
    const int c = int(f);
    return c >= nc ? nc - 1 : c;
  }
  // The neighbour cells of cell coordinate c along axis d, `rings` either side: coordinates lo..hi
  // (inclusive) before wrapping on periodic axes. A periodic axis with fewer than 2 rings + 1 cells
  // visits each of its cells once (never twice), with the minimum image deciding the separation.
  PARDYN_HD void axis_range(int d, int c, int rings, int& lo, int& hi) const {
    const int nc = cells[d];
    if (periodic[d]) {
      if (nc < 2 * rings + 1) {
        lo = 0;
        hi = nc - 1;
      } else {
        lo = c - rings;
        hi = c + rings;
      }
    } else {
      lo = c - rings < 0 ? 0 : c - rings;
      hi = c + rings > nc - 1 ? nc - 1 : c + rings;
    }
  }
  PARDYN_HD int wrap_cell(int c, int d) const {
    const int nc = cells[d];
    return c < 0 ? c + nc : (c >= nc ? c - nc : c);
  }
};
static_assert(std::is_trivially_copyable_v<CellList>);

// --- The stencil: the cells around a particle's cell, walked by every traversal that reads the
// cells themselves (the CPU and GPU stencil and far-zone traversals, the GPU's Verlet-list build,
// the rdf analysis) through for_each_stencil_cell below, written once here. Two walks differ and
// stay apart: the CPU's Verlet-list build (cell_list.cpp) scans rows of sub-cell slices, and the
// far zones' pyramid (cell_far.hpp) walks each level's block around an excluded one, unwrapped.

// The block of cells `rings` either side of a cell: per axis d, the coordinates lo[d] .. hi[d]
// (inclusive, before wrapping) that CellList::axis_range gives. Clamped to the grid on walled and
// open axes; on a periodic axis c - rings .. c + rings, or the whole axis (0 .. cells - 1) when it
// has fewer than 2 rings + 1 cells, so that no cell is visited twice. Axes from Dim on: 0 .. 0.
struct CellStencil {
  int lo[3] = {0, 0, 0};
  int hi[3] = {0, 0, 0};
};

// The stencil around the cell of coordinates c: rings = 1 for cut-off laws (the 3^dim cells; a
// cell is at least the range wide), CellList::near for the exact part of far zones.
template <int Dim>
PARDYN_HD PARDYN_INLINE CellStencil stencil_around(const CellList& cl, const int (&c)[3],
                                                   int rings) {
  CellStencil s;
  for (int d = 0; d < Dim; ++d) cl.axis_range(d, c[d], rings, s.lo[d], s.hi[d]);
  return s;
}

// Calls visit(std::size_t cell) once for every cell of the stencil s, with the cell's linear index
// (CellList::cell_index; its slots are cell_start[cell] .. cell_end[cell]). Order: axis 2
// outermost, axis 0 innermost, each from lo to hi: in 3D with one ring, the offsets
// (-1,-1,-1), (0,-1,-1), (1,-1,-1), (-1,0,-1), ..., (1,1,1) from the centre cell (clamped at a
// walled or open edge). The traversals sum their pairs in this order, so it is part of their
// results (bit for bit): keep it.
//
// Periodic wrapping: a coordinate outside the grid on a periodic axis is wrapped into it (by one
// period: the stencil never spans more than the axis). Only the cell index wraps; no image shift is
// passed: the callers take each pair's separation with the minimum image (PeriodicImage::wrap),
// which for a pair within the range is the image the stencil reaches it through (on a periodic
// axis of fewer than 2 rings + 1 cells, whose cells are visited once each, the minimum image
// decides).
//
// The walk is force-inlined, and so should the visitor be: a lambda marked PARDYN_INLINE_LAMBDA
// (or a functor with a PARDYN_INLINE operator()). In a kernel its body then becomes the loop body:
// no call, no function pointer, loop bounds as the caller had them. Host and device. One catch in
// kernels: nvcc forgets the __restrict__ of a pointer that the lambda captures, so read the
// particles inside a PARDYN_INLINE function that takes them as __restrict__ parameters (as the GPU
// traversal's cl_cell_sum does), or the loads may lose ld.global.nc.
template <int Dim, class Visit>
PARDYN_HD PARDYN_INLINE void for_each_stencil_cell(const CellList& cl, const CellStencil& s,
                                                   Visit&& visit) {
  for (int a2 = s.lo[2]; a2 <= s.hi[2]; ++a2)
    for (int a1 = s.lo[1]; a1 <= s.hi[1]; ++a1)
      for (int a0 = s.lo[0]; a0 <= s.hi[0]; ++a0)
        visit(cl.cell_index(cl.wrap_cell(a0, 0), cl.wrap_cell(a1, 1),
                            Dim == 3 ? cl.wrap_cell(a2, 2) : 0));
}

// The same around the cell of coordinates c (stencil_around(cl, c, rings)). Callers that walk the
// stencil of one cell for each of its particles build it once and call the form above.
template <int Dim, class Visit>
PARDYN_HD PARDYN_INLINE void for_each_stencil_cell(const CellList& cl, const int (&c)[3], int rings,
                                                   Visit&& visit) {
  for_each_stencil_cell<Dim>(cl, stencil_around<Dim>(cl, c, rings), visit);
}

// What to build.
struct CellListOptions {
  // Pairs closer than this are found. Infinity: a long-range law, served by far zones.
  double cutoff = 0;
  // A long-range law's short-range radius (Reach::short_range): far zones keep every pair closer
  // than this exact.
  double short_range = 0;
  // Verlet list range margin (length). The list holds pairs closer than cutoff + skin and is
  // rebuilt when a particle has moved more than skin / 2 since the last build.
  double skin = 0.3;
  // Build the Verlet list (else traversals walk the cell stencil at every evaluation). Without a
  // skin the list is rebuilt at every update.
  bool neighbour_list = true;
  // List each pair once (in the row of its lower slot) instead of from both sides. Honoured on the
  // CPU, where the traversal then computes each pair once (Newton's third law); the GPU always
  // builds a full list (no atomics).
  bool half_list = false;
  // Cell edge (length). 0: cutoff + skin for cut-off laws; for far zones, chosen so that the exact
  // near-zone work and the far-cell work balance (about sqrt((2 near + 1)^dim N) cells).
  double cell_size = 0;
  // Far zones: rings of cells around a particle's cell whose particles interact exactly.
  int near = 1;
  // Far zones, the coarser levels of the pyramid: rings of cells around the target's cell at each
  // level that are left to the finer levels (CellList::rings).
  int rings = 2;
  // Far zones: cells act with their quadrupole moments too (else monopoles only).
  bool quadrupole = true;
  // Largest number of cells (0: 2 N + 1024). A grid that would need more gets larger cells: a
  // particle flying away on an open axis costs speed, never memory.
  std::size_t max_cells = 0;
  // Far zones on several ranks (Reach::comm, Reach::ghost_reach): the store holds this rank's
  // particles [0, targets()) and ghosts, every other rank's particle within ghost_reach of a
  // target among them. Every rank then builds the grid of the whole box (walled axes only) for
  // all ranks' particles (N summed over comm); the pyramid's levels whose cells a target reaches
  // within ghost_reach come from the rank's own and ghost particles, the levels above
  // (CellList::shared_level on) from the own particles' sums added over comm.
  Comm* comm = nullptr;
  double ghost_reach = 0;
};

#if !defined(__CUDACC_RTC__)
class CellListBuilder {
 public:
  CellListBuilder();
  ~CellListBuilder();
  CellListBuilder(const CellListBuilder&) = delete;
  CellListBuilder& operator=(const CellListBuilder&) = delete;

  // Brings the structure up to date with the store's positions: rebuilds (bins, sorts, and builds
  // the Verlet list) when needed, and always refreshes the sorted positions (and, for far zones,
  // the cells' centres of mass). Runs on the store's backend. Returns true when it rebuilt.
  bool update(const ParticleStore& s, const Box& box, const CellListOptions& opt);
  const CellList& list() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Throws a pardyn::Error naming what to change when the near zone of cl cannot hold the law's
// short-range part (far zones only): the pairs closer than short_range_radius(ev) (evaluator.hpp),
// the radius the default cell size respects.
template <class Eval>
void check_near_zone(const Eval& ev, const CellList& cl) {
  const double need = short_range_radius(ev);
  if (need <= 0) return;
  double w = cl.width[0];
  for (int d = 1; d < cl.dim; ++d) w = w < cl.width[d] ? w : cl.width[d];
  const double reach = cl.near * w;
  if (reach < need)
    throw Error("cell_list far zones: the exact near zone reaches " + format_number(reach) +
                " (near = " + std::to_string(cl.near) + " rings of cells of edge " +
                format_number(w) + ") but the law's short-range part reaches " +
                format_number(need) + "; raise the scheme's cell_size or near");
}

// What both traversals (cell_list_cpu.hpp, cell_list_cuda.cuh) check first: the list holds the
// store's n particles, and with far zones the law has a far field that the near zone covers
// (check_near_zone). Returns false when there is nothing to do (no particles).
template <class Eval>
bool check_cell_list(const Eval& ev, const CellList& cl, std::size_t n) {
  if (cl.n != n)
    throw Error("internal: the cell list holds " + std::to_string(cl.n) + " particles, the store " +
                std::to_string(n) + " (the scheme was not updated)");
  if (n == 0) return false;
  if (!cl.far) return true;
  if constexpr (EvaluatorTraits<Eval>::has_far_field) check_near_zone(ev, cl);
  else throw Error("cell_list far zones need a law with a far-field form (far() in its evaluator)");
  return true;
}

#endif  // !__CUDACC_RTC__

}  // namespace pardyn
