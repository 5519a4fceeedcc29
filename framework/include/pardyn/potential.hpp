// SPDX-License-Identifier: BSD-3-Clause
// The Potential plugin kind: a force law, as the framework calls it (compute() into the store for a
// neighbourhood, its reach, the neighbourhood kinds it supports, boundary hooks). Pair laws need not
// implement it by hand: PairPotential<Law> (pair_potential.hpp) and ExternalPotential<Law>
// (external_potential.hpp) turn an evaluator into one.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/potential.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <limits>
#include <string>

#include "pardyn/box.hpp"
#include "pardyn/neighbourhood.hpp"
#include "pardyn/particles.hpp"

namespace pardyn {

// A force law. Built-in pair laws use PairPotential<Law> (pair_potential.hpp): the physics in one
// evaluator, the loops from the framework.
class Potential {
 public:
  virtual ~Potential() = default;
  // Adds this law's accelerations (and energies/virials when asked) to the store.
  virtual void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) = 0;
  // Interaction range; infinity for long-range laws.
  virtual double cutoff() const { return std::numeric_limits<double>::infinity(); }
  // The cut-off and the short-range radius together (what schemes are updated with).
  virtual Reach reach() const { return Reach{cutoff(), 0.0}; }
  virtual bool supports(NeighbourhoodKind k) const = 0;
  // Why supports(k) is false, in words a user can act on (empty: the framework says it generically).
  virtual std::string unsupported_reason(NeighbourhoodKind) const { return {}; }
  // An external potential (a field acting on each particle alone: uniform_field, soft walls) breaks
  // momentum conservation; the temperature's degrees of freedom then keep the centre-of-mass ones.
  virtual bool external() const { return false; }
  // --- A boundary condition the potential enforces (the walls plugin: hard walls on the faces of
  // the axes whose boundary is "wall"). The framework calls the hooks of at most one such potential
  // of a run; with "wall" axes and none given, it makes the "walls" potential with its defaults.
  virtual bool enforces_boundaries() const { return false; }
  // Before a drift x += v dt (StepContext::drift), on the store's backend.
  virtual void before_drift(ParticleStore&, const Box&, double /*dt*/) {}
  // After the positions changed (a drift, a restart), once periodic axes are wrapped: puts every
  // particle back inside the boundaries.
  virtual void apply_boundaries(ParticleStore&, const Box&) {}
  // Why this potential changes the total energy (e.g. inelastic walls), for the note on dE/E0 in
  // thermo; empty when it conserves it.
  virtual std::string energy_note() const { return {}; }
};

}  // namespace pardyn
