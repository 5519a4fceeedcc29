// SPDX-License-Identifier: BSD-3-Clause
// tree: the Barnes-Hut scheme. Rebuilds an octree (3D) or quadtree (2D) over the particles sorted
// along a Morton curve at every force evaluation, with monopoles or quadrupoles; the potential's
// tree walk (traversal/tree_cpu.hpp, tree_cuda.cuh) does the rest. The work is done by TreeBuilder
// in libpardyn (pardyn/tree.hpp); this plugin holds the user's parameters. See docs/tree.md.
#include "pardyn/plugin_export.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::plugins {
namespace {

class TreeScheme final : public Scheme {
 public:
  explicit TreeScheme(const TreeOptions& opt) : opt_(opt) {}

  void update(ParticleStore& s, const Box& box, const Reach& reach) override {
    opt_.short_range = reach.short_range;
    if (box.any_periodic(s.dim())) throw Error(tree_periodic_message());
    builder_.build(s, opt_);
  }

  Neighbourhood neighbourhood() const override {
    return {NeighbourhoodKind::Tree, &builder_.tree()};
  }

 private:
  TreeOptions opt_;
  TreeBuilder builder_;
};

void register_tree(Registrar& r) {
  FactoryInfo f;
  f.name = "tree";
  f.summary = "Barnes-Hut octree/quadtree, O(N log N): long-range laws with a far-field form";
  f.doc =
      "Builds an octree (3D) or quadtree (2D) over the particles sorted along a Morton curve, at\n"
      "every force evaluation, on the run's backend. A node (centre of mass X, mass M, optionally\n"
      "its quadrupole) acts as a whole on a target whose distance to X exceeds l/theta + delta\n"
      "(l: the node's cell edge, delta: distance from the cell centre to X); otherwise it is\n"
      "opened, and leaves interact particle by particle with the law's exact pair form. Targets\n"
      "walk the tree in groups of up to 32 neighbours (a node or sibling nodes; the group's\n"
      "bounding box is tested), so every target is at least as accurate as with its own walk.\n"
      "Needs a law with a far-field form (gravity, log, soft_gas); a law with a short-range part\n"
      "(soft_gas) also opens every node that could hold a particle within its short-range radius\n"
      "of a target, so that part stays exact. Open or wall boundaries only. Accuracy and speed:\n"
      "docs/tree.md.";
  f.schema
      .real("theta", 0.5, "1",
            "opening angle: smaller is more accurate and slower (forces converge to all_pairs as "
            "theta -> 0)",
            0.0, 1.0, true)
      .boolean(
          "quadrupole", true,
          "use quadrupole moments of the nodes (1.4-6x smaller force errors at the same theta)")
      .integer("leaf_size", 16, "a node with at most this many particles is not split", 1, 64);
  f.backends = kCpu | kCuda;
  r.add(std::move(f), Factory<Scheme>([](const ParamSet& ps, const RunInfo& run) {
          TreeOptions p;
          p.theta = ps.real("theta");
          p.quadrupole = ps.boolean("quadrupole");
          p.leaf_size = int(ps.integer("leaf_size"));
          // Refused when made (and so by `pardyn validate`), not at the first force evaluation.
          if (run.box.any_periodic(run.dim))
            throw Error((ps.context.empty() ? std::string("scheme \"tree\"") : ps.context) + ": " +
                        tree_periodic_message());
          return std::unique_ptr<Scheme>(new TreeScheme(p));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_tree)
