// SPDX-License-Identifier: BSD-3-Clause
#include "force_runner.hpp"

#include <chrono>

#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"
#include "parallel/tree_exchange.hpp"

namespace pardyn {

namespace {

// The rank's own particles, the run's box: a serial run's terms.
class LocalRunner final : public ForceRunner {
 public:
  LocalRunner(Potential& pot, Scheme& scheme, const Box& box)
      : pot_(pot), scheme_(scheme), box_(box) {}
  const char* name() const override { return "local"; }
  void compute(Evaluation& ev) override {
    scheme_.update(ev.store, box_, pot_.reach());
    if (scheme_.reuses_structure() && scheme_.rebuilt()) {
      // Where the structure was built: a checkpoint saves it (rebuild_from builds from it).
      if (!built_at_ || built_at_size_ != ev.store.size()) built_at_ = ev.ops.new_state(ev.store);
      built_at_size_ = ev.store.size();
      ev.ops.get_state(ev.store, *built_at_);
    }
    ev.lap(Phase::Neighbour);
    pot_.compute(ev.store, scheme_.neighbourhood(), ev.req);
    ev.lap(Phase::Force);
  }
  void build(ParticleStore& s, BackendOps&) override { scheme_.update(s, box_, pot_.reach()); }
  StateVector* built_at() override { return built_at_.get(); }
  // The structure built again from the positions `fill` puts into a state vector, then the
  // current positions put back (without a new generation of the store, so that a Verlet list is
  // kept until the particles have moved far enough, exactly as in the run that saved them).
  void rebuild_from(ParticleStore& s, BackendOps& ops,
                    const std::function<void(StateVector&)>& fill) override {
    if (!scheme_.reuses_structure()) return;
    auto now = ops.new_state(s);
    ops.get_state(s, *now);
    built_at_ = ops.new_state(s);
    built_at_size_ = s.size();
    fill(*built_at_);
    ops.set_state(s, *built_at_);
    scheme_.update(s, box_, pot_.reach());
    ops.set_state(s, *now);
  }

 private:
  Potential& pot_;
  Scheme& scheme_;
  const Box& box_;
  std::unique_ptr<StateVector> built_at_;
  std::size_t built_at_size_ = 0;
};

class ExternalRunner final : public ForceRunner {
 public:
  ExternalRunner(Potential& pot, Scheme& scheme) : pot_(pot), scheme_(scheme) {}
  const char* name() const override { return "external"; }
  void compute(Evaluation& ev) override {
    pot_.compute(ev.store, scheme_.neighbourhood(), ev.req);
    ev.lap(Phase::Force);
  }
  void build(ParticleStore&, BackendOps&) override {}

 private:
  Potential& pot_;
  Scheme& scheme_;
};

// The domain's work store: own particles (periodic images moved next to the sub-box), then the
// ghosts; the forces of the own ones are added to the store (or, for the first term, become the
// store's). The work store is filled by Domain::prepare once per evaluation, before the terms.
class DomainRunner final : public ForceRunner {
 public:
  DomainRunner(Potential& pot, Scheme& scheme, parallel::Domain& domain, const Box& box, Comm* comm,
               double ghost_reach)
      : pot_(pot), scheme_(scheme), domain_(domain), box_(box), far_(ghost_reach > 0) {
    reach_ = pot.reach();
    if (far_) {
      reach_.comm = comm;
      reach_.ghost_reach = ghost_reach;
    }
  }
  const char* name() const override { return far_ ? "far zones" : "domain"; }
  void compute(Evaluation& ev) override {
    ParticleStore& w = domain_.work();
    ForceRequest req = ev.req;
    req.box = &grid_box();
    ev.ops.zero_forces(w, req.energy, req.virial);
    // This rank's own work (list build and forces), timed for the balance log when asked, the
    // device waited for around it: a sub-box with a droplet in it costs more than one of vapour.
    const bool timed = ev.measure;
    std::chrono::steady_clock::time_point t0;
    if (timed) {
      parallel::sync(w.backend());
      t0 = std::chrono::steady_clock::now();
    }
    scheme_.update(w, grid_box(), reach_);
    ev.lap(Phase::Neighbour);
    pot_.compute(w, scheme_.neighbourhood(), req);
    if (timed) {
      parallel::sync(w.backend());
      ev.work_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ev.lap(Phase::Force);
    if (ev.first && ev.only) domain_.take_forces(ev.store, req.energy);
    else parallel::add_forces(w, ev.store, domain_.owned(), req.energy, ev.first);
    ev.lap(Phase::Comm);
  }
  void build(ParticleStore&, BackendOps&) override {
    scheme_.update(domain_.work(), grid_box(), reach_);
  }
  bool sets_forces() const override { return true; }

 private:
  // Far zones use the whole box (one grid for all ranks), cut-off laws the sub-box's.
  const Box& grid_box() const { return far_ ? box_ : domain_.work_box(); }
  Potential& pot_;
  Scheme& scheme_;
  parallel::Domain& domain_;
  const Box& box_;
  bool far_;
  Reach reach_;
};

class RingRunner final : public ForceRunner {
 public:
  RingRunner(Potential& pot, parallel::Ring& ring) : pot_(pot), ring_(ring) {}
  const char* name() const override { return "ring"; }
  void compute(Evaluation& ev) override {
    ring_.compute(pot_, ev.store, ev.req, ev.time_ring);
    ev.lap(Phase::Force);  // the ring's messages included
  }
  void build(ParticleStore&, BackendOps&) override {}

 private:
  Potential& pot_;
  parallel::Ring& ring_;
};

// A tree on several ranks: this rank's particles and what the others' trees sent them.
class TreeRunner final : public ForceRunner {
 public:
  TreeRunner(Potential& pot, Scheme& scheme, std::unique_ptr<parallel::TreeExchange> exchange,
             const Box& box)
      : pot_(pot), scheme_(scheme), exchange_(std::move(exchange)), box_(box) {}
  const char* name() const override { return "tree exchange"; }
  void compute(Evaluation& ev) override {
    // The exchange builds this rank's tree, sends the others what they need and walks: its walks
    // add to the store's forces (zeroed by the caller). The build and the walks are this rank's
    // work that differs between the ranks (a dense core costs more per particle than a halo):
    // what the re-dealing of the Morton curve balances, timed apart from the waiting when
    // ev.measure asks.
    exchange_->compute(ev.store, pot_, scheme_, box_, pot_.reach(), ev.req,
                       ev.measure ? &ev.work_seconds : nullptr);
    ev.lap(Phase::Force);
  }
  void build(ParticleStore&, BackendOps&) override {}
  const parallel::TreeExchange& exchange() const { return *exchange_; }

 private:
  Potential& pot_;
  Scheme& scheme_;
  std::unique_ptr<parallel::TreeExchange> exchange_;
  const Box& box_;
};

}  // namespace

std::unique_ptr<ForceRunner> make_local_runner(Potential& pot, Scheme& scheme, const Box& box) {
  return std::make_unique<LocalRunner>(pot, scheme, box);
}
std::unique_ptr<ForceRunner> make_external_runner(Potential& pot, Scheme& scheme) {
  return std::make_unique<ExternalRunner>(pot, scheme);
}
std::unique_ptr<ForceRunner> make_domain_runner(Potential& pot, Scheme& scheme,
                                                parallel::Domain& domain, const Box& box,
                                                Comm* comm, double ghost_reach) {
  return std::make_unique<DomainRunner>(pot, scheme, domain, box, comm, ghost_reach);
}
std::unique_ptr<ForceRunner> make_ring_runner(Potential& pot, parallel::Ring& ring) {
  return std::make_unique<RingRunner>(pot, ring);
}
std::unique_ptr<ForceRunner> make_tree_runner(Potential& pot, Scheme& scheme,
                                              std::unique_ptr<parallel::TreeExchange> exchange,
                                              const Box& box) {
  return std::make_unique<TreeRunner>(pot, scheme, std::move(exchange), box);
}
const parallel::TreeExchange* tree_exchange_of(const ForceRunner& r) {
  const auto* t = dynamic_cast<const TreeRunner*>(&r);
  return t ? &t->exchange() : nullptr;
}

}  // namespace pardyn
