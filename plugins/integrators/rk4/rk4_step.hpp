// SPDX-License-Identifier: BSD-3-Clause
// One classic Runge-Kutta step on the store's state (x, v): shared by the rk4 integrator and the
// starter of ab5, which include this header (each plugin compiles its own copy; nothing crosses a
// library boundary).
#pragma once

#include <memory>

#include "pardyn/plugin.hpp"

namespace pardyn::plugins {

// Scratch state vectors of one RK4 step, (re)allocated when the particle count changes.
struct Rk4Work {
  std::size_t n = 0;
  std::unique_ptr<StateVector> y;
  std::unique_ptr<StateVector> k[4];

  // Returns true when the vectors were (re)allocated, i.e. anything kept from earlier steps in
  // vectors of the old size is gone too.
  bool fit(BackendOps& ops, const ParticleStore& s) {
    if (y && n == s.size()) return false;
    n = s.size();
    y = ops.new_state(s);
    for (auto& ki : k) ki = ops.new_state(s);
    return true;
  }
};

// Advances the store by h. k1 is the derivative at the current state (the accelerations are valid
// on entry, so it costs no force evaluation); the step costs four (k2, k3, k4 and the final forces,
// which the exit contract needs and the next step reuses as its k1).
inline void rk4_step(StepContext& ctx, double h, Rk4Work& w, const StateVector& k1) {
  auto& s = ctx.store();
  auto& ops = ctx.ops();
  ops.get_state(s, *w.y);
  const StateVector* prev = &k1;
  const double c[3] = {0.5 * h, 0.5 * h, h};
  for (int i = 0; i < 3; ++i) {
    ops.set_combination(s, *w.y, 1, &c[i], &prev);
    ctx.apply_boundaries();
    ctx.compute_stage_forces();  // energies, if wanted, at the final state only
    ops.get_derivative(s, *w.k[i + 1]);
    prev = w.k[i + 1].get();
  }
  const double b[4] = {h / 6, h / 3, h / 3, h / 6};
  const StateVector* k[4] = {&k1, w.k[1].get(), w.k[2].get(), w.k[3].get()};
  ops.set_combination(s, *w.y, 4, b, k);
  ctx.apply_boundaries();
  ctx.compute_forces();
}

}  // namespace pardyn::plugins
