// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: how one force term of a run is computed. Each [[potential]] gets one
// runner when the run is planned (Simulation::plan_parallel), and a force evaluation is then
//     communicate();  for (term : terms) term.runner->compute(evaluation);
// as in HOOMD-blue's step: a term never asks which parallel mode the run is in, its runner knows.
//   local      the term on the rank's own particles alone (a serial run; a parallel run's terms
//              that need nothing of the other ranks never get this one)
//   external   a field acting on each particle alone: no neighbourhood
//   domain     a cut-off law on the domain decomposition's work store (own particles and ghosts)
//   far zones  a long-range law's cell-list far zones on the work store, over the whole box's
//              pyramid whose coarse levels the ranks sum together
//   ring       all-pairs: the blocks of every rank pass once around the ring of ranks
//   tree       the tree exchange: locally essential trees between the ranks
// The communication that several terms share (the domain decomposition's migration and ghosts)
// happens once per evaluation, before the terms (Simulation::evaluate_forces).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pardyn/plugin.hpp"

namespace pardyn {

namespace parallel {
class Domain;
class Ring;
class TreeExchange;
}  // namespace parallel

// Where a runner's time goes (Simulation's closing breakdown, docs/performance.md).
enum class Phase { Neighbour, Force, Comm };

// One force evaluation as the runners see it.
struct Evaluation {
  ParticleStore& store;
  BackendOps& ops;
  ForceRequest req;  // energies and virials as asked; box: the run's
  // The first term of the evaluation, whose runner sets_forces(): it sets the store's forces
  // instead of adding to them (the store was not zeroed). `only`: it is the only term.
  bool first = false;
  bool only = false;
  // The ring times this evaluation's computing per rank (its speed balance).
  bool time_ring = false;
  // Load balance (Simulation::measure_balance): runners whose cost differs between ranks add the
  // seconds of this rank's own work in this evaluation (the device synchronised around it, no
  // waiting for other ranks) to work_seconds.
  bool measure = false;
  double work_seconds = 0;
  // Called after each part of the work, with the phase it belonged to.
  std::function<void(Phase)> lap;
};

class ForceRunner {
 public:
  virtual ~ForceRunner() = default;
  // "local", "domain", "far zones", "ring", "tree exchange", "external".
  virtual const char* name() const = 0;
  // Adds the term's forces (and energies, virials when asked) to the store's own particles.
  virtual void compute(Evaluation& ev) = 0;
  // pardyn validate: the term's structure built over the current state, where a scheme checks
  // what it needs of the law and the box (the ring's and the tree exchange's build at every
  // evaluation, so nothing to build ahead).
  virtual void build(ParticleStore& s, BackendOps& ops) = 0;
  // Whether, as the first term of an evaluation, it sets the store's forces itself (the
  // framework then does not zero them first).
  virtual bool sets_forces() const { return false; }
  // Local runners of schemes that reuse their structure (a Verlet list): the positions it was
  // last built from, which a checkpoint saves (null: none).
  virtual StateVector* built_at() { return nullptr; }
  // A checkpoint's positions to rebuild the structure from (restore_states).
  virtual void rebuild_from(ParticleStore&, BackendOps&, const std::function<void(StateVector&)>&) {
  }
};

// The term (law `pot`, scheme `scheme`) on the rank's own particles.
std::unique_ptr<ForceRunner> make_local_runner(Potential& pot, Scheme& scheme, const Box& box);
// A field on each particle alone.
std::unique_ptr<ForceRunner> make_external_runner(Potential& pot, Scheme& scheme);
// A cell-list term on the domain's work store: a cut-off law (ghost_reach 0: the sub-box's grid)
// or far zones (ghost_reach > 0: the whole box's grid, the coarse levels summed over `comm`).
std::unique_ptr<ForceRunner> make_domain_runner(Potential& pot, Scheme& scheme,
                                                parallel::Domain& domain, const Box& box,
                                                Comm* comm, double ghost_reach);
std::unique_ptr<ForceRunner> make_ring_runner(Potential& pot, parallel::Ring& ring);
std::unique_ptr<ForceRunner> make_tree_runner(Potential& pot, Scheme& scheme,
                                              std::unique_ptr<parallel::TreeExchange> exchange,
                                              const Box& box);
// The tree exchange of a tree runner (statistics), else null.
const parallel::TreeExchange* tree_exchange_of(const ForceRunner& r);

}  // namespace pardyn
