// SPDX-License-Identifier: BSD-3-Clause
// ab5: the fifth-order Adams-Bashforth method on the state y = (x, v), with f(y) = (v, a(x)):
//
//   y(t + dt) = y + dt/720 (1901 f_n - 2774 f_{n-1} + 2616 f_{n-2} - 1274 f_{n-3} + 251 f_{n-4})
//
// It needs the derivatives of the last five steps, so the first four steps (and the first four
// after any change of dt or of the particle count) are classic RK4 steps. Once started, one force
// evaluation per step: the best accuracy per evaluation of the fixed-step methods (seed 001).
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "../rk4/rk4_step.hpp"
#include "pardyn/plugin_export.hpp"

#include "../../common/fixed_step.hpp"

namespace pardyn::plugins {
namespace {

class Ab5 final : public Integrator {
 public:
  explicit Ab5(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  bool particle_state() const override { return true; }
  void set_dt(double dt) override {
    // The history holds derivatives at spacing dt: a new spacing makes it useless (a variable-step
    // Adams method would need other coefficients), so the method starts again.
    if (dt != dt_) known_ = 0;
    dt_ = dt;
  }

  // Checkpoints: the step the history was taken at and the derivatives it holds.
  void save(StateOut& out) const override {
    out.real("dt", dt_);
    out.integer("known", known_);
    for (int j = 0; j < known_; ++j) out.vector("history" + std::to_string(j), *history_[j]);
  }
  void load(StateIn& in, StepContext& ctx) override {
    dt_ = in.real("dt");
    const std::int64_t known = in.integer("known");
    if (known < 0 || known > kSteps)
      throw Error("ab5: the checkpoint's history holds " + std::to_string(known) +
                  " derivatives; at most " + std::to_string(kSteps) + " are possible");
    known_ = int(known);
    work_.fit(ctx.ops(), ctx.store());
    for (auto& f : history_) f = ctx.ops().new_state(ctx.store());
    for (int j = 0; j < known_; ++j) in.vector("history" + std::to_string(j), *history_[j]);
  }

  void step(StepContext& ctx) override {
    auto& s = ctx.store();
    auto& ops = ctx.ops();
    if (work_.fit(ops, s)) {
      for (auto& f : history_) f = ops.new_state(s);
      known_ = 0;
    }
    // The oldest derivative's vector is reused for the newest, which goes in front: history_[j] is
    // f_{n-j}. The accelerations are valid on entry, so f_n costs no force evaluation.
    std::rotate(history_.rbegin(), history_.rbegin() + 1, history_.rend());
    ops.get_derivative(s, *history_[0]);
    known_ = std::min(known_ + 1, kSteps);
    if (known_ < kSteps) {
      rk4_step(ctx, dt_, work_, *history_[0]);
      return;
    }
    const double h = dt_ / 720.0;
    const double c[kSteps] = {1901 * h, -2774 * h, 2616 * h, -1274 * h, 251 * h};
    const StateVector* f[kSteps];
    for (int j = 0; j < kSteps; ++j) f[j] = history_[j].get();
    ops.get_state(s, *work_.y);
    ops.set_combination(s, *work_.y, kSteps, c, f);
    ctx.apply_boundaries();
    ctx.compute_forces();
  }

 private:
  static constexpr int kSteps = 5;
  double dt_;
  int known_ = 0;  // how many of history_ hold derivatives of this run at the current spacing
  std::array<std::unique_ptr<StateVector>, kSteps> history_;
  Rk4Work work_;  // the starter's scratch; its y also serves the Adams step
};

void register_ab5(Registrar& r) {
  register_fixed_step<Ab5>(
      r, "ab5", "5th-order Adams-Bashforth with an RK4 starter: 1 force evaluation per step",
      "y += dt/720 (1901 f_n - 2774 f_{n-1} + 2616 f_{n-2} - 1274 f_{n-3} + 251 f_{n-4}),\n"
      "y = (x, v), f(y) = (v, a(x)): an explicit multistep method of fifth order.\n"
      "One force evaluation per step once started; the first four steps are classic RK4 steps\n"
      "(four evaluations each) that fill the history of derivatives. Changing dt (set_dt, e.g.\n"
      "dt_control = \"acceleration\") restarts it with RK4 steps, so use a fixed dt with it.\n"
      "The most accurate fixed-step method per force evaluation on smooth problems (the Habr\n"
      "article's integrator comparison, docs/sources.md; docs/integrators.md),\n"
      "but not symplectic (the energy drifts) and its stability region is small: dt must resolve\n"
      "the fastest motion well, and it does not suit reflecting walls or collisions. For close\n"
      "encounters use dopri5.");
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_ab5)
