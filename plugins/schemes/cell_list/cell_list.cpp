// SPDX-License-Identifier: BSD-3-Clause
// cell_list: particles binned into cells of at least the interaction range and sorted by cell (on
// the backend: the GPU sorts on the device), with an optional Verlet list and, for long-range laws,
// far zones (exact near cells, far cells by their centres of mass). The work is done by
// CellListBuilder in libpardyn (pardyn/cell_list.hpp); this plugin holds the user's parameters.
#include "pardyn/cell_list.hpp"

#include <cmath>

#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

class CellListScheme final : public Scheme {
 public:
  CellListScheme(const ParamSet& p, const RunInfo&) {
    opt_.skin = p.real("skin");
    opt_.neighbour_list = opt_.skin > 0;
    opt_.cell_size = p.real("cell_size");
    opt_.near = int(p.integer("near"));
    opt_.rings = int(p.integer("rings"));
    opt_.quadrupole = p.boolean("quadrupole");
    opt_.max_cells = std::size_t(p.integer("max_cells"));
    opt_.half_list = p.boolean("newton");
    context_ = p.context;
  }
  void update(ParticleStore& s, const Box& box, const Reach& reach) override {
    opt_.cutoff = reach.cutoff;
    opt_.short_range = reach.short_range;
    opt_.comm = reach.comm;
    opt_.ghost_reach = reach.ghost_reach;
    try {
      rebuilt_ = builder_.update(s, box, opt_);
    } catch (const Error& e) {
      throw Error(context_.empty() ? std::string(e.what()) : context_ + ": " + e.what());
    }
  }
  Neighbourhood neighbourhood() const override {
    return {NeighbourhoodKind::CellList, &builder_.list()};
  }
  // Only the Verlet list outlives an update (the stencil and the far zones sort at every one).
  bool reuses_structure() const override {
    return opt_.neighbour_list && opt_.skin > 0 && std::isfinite(opt_.cutoff);
  }
  bool rebuilt() const override { return rebuilt_; }

 private:
  CellListOptions opt_;
  CellListBuilder builder_;
  bool rebuilt_ = true;
  std::string context_;
};

void register_cell_list(Registrar& r) {
  FactoryInfo f;
  f.name = "cell_list";
  f.summary =
      "cells of the cut-off size, sorted on the device, with a Verlet list; far zones for "
      "long-range laws";
  f.doc =
      "Particles are binned into cells whose edge is at least the potential's cut-off (plus the\n"
      "skin) and sorted by cell at every rebuild, on the CPU or the GPU. With skin > 0 a Verlet "
      "list\n"
      "of all pairs closer than cut-off + skin is kept (CPU: each pair once, Newton's third law; "
      "GPU:\n"
      "from both sides, no atomics) and rebuilt automatically as soon as any particle has moved "
      "more\n"
      "than skin/2; with skin = 0 the 3^dim cells around each cell are walked at every "
      "evaluation.\n"
      "Periodic axes use the minimum image; walled axes span the box;\n"
      "open axes span the particles' bounding box (the cell count is capped by max_cells).\n"
      "Long-range laws with a far-field form (gravity, log, soft_gas) use far zones: particles in\n"
      "the `near` rings of cells around a particle's cell interact exactly (and must cover a\n"
      "law's short range), the rest through a pyramid of cells, each level halving the cells per\n"
      "axis: a level acts through its cells' mass, centre of mass and (quadrupole = true) second\n"
      "moments on targets more than `rings` of its cells away, so the cost grows as N log N.\n"
      "Open or walled axes only (on several ranks, walled axes only: the ranks share one grid;\n"
      "docs/parallel.md). Force errors against all_pairs: docs/cell-list.md.";
  f.backends = kCpu | kCuda;
  f.schema
      .real(
          "skin", 0.3, "length",
          "Verlet list margin: the list holds pairs closer than cut-off + skin and is rebuilt when "
          "a particle has moved more than skin/2; 0: no list (cell stencil at every evaluation)",
          0.0)
      .real("cell_size", 0.0, "length",
            "cell edge; 0: cut-off + skin, or for long-range laws about 8 particles a cell (at "
            "least the law's short range / near). Must be at least cut-off + skin",
            0.0)
      .integer("near", 1,
               "far zones (long-range laws): rings of cells around a particle's cell whose "
               "particles interact exactly; the rest act through the cell pyramid",
               1.0, 64.0)
      .integer("rings", 2,
               "far zones: at each level of the cell pyramid, rings of cells around the target's "
               "cell left to the finer levels (an opening criterion: larger is more accurate and "
               "slower; at least near / 2)",
               1.0, 16.0)
      .boolean("quadrupole", true,
               "far zones: cells act with their second moments too (else mass and centre of mass "
               "only)")
      .boolean("newton", true,
               "CPU backend: list each pair once and apply Newton's third law (false: a full list, "
               "each pair computed from both sides; the GPU always uses a full list)")
      .integer("max_cells", 0,
               "largest number of cells (0: 2 N + 1024); a larger grid gets larger cells", 0.0,
               1e9);
  r.add(std::move(f), Factory<Scheme>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Scheme>(new CellListScheme(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_cell_list)
