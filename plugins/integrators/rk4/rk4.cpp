// SPDX-License-Identifier: BSD-3-Clause
// rk4: the classic fourth-order Runge-Kutta method on the state y = (x, v), whose derivative is
// f(y) = (v, a(x)). Four force evaluations per step; not symplectic, so the energy drifts slowly.
//
//   k1 = f(y)                      (the accelerations valid on entry: no evaluation)
//   k2 = f(y + dt/2 k1)
//   k3 = f(y + dt/2 k2)
//   k4 = f(y + dt k3)
//   y(t + dt) = y + dt/6 (k1 + 2 k2 + 2 k3 + k4)    (then the forces there, for the next k1)
#include "pardyn/plugin_export.hpp"
#include "rk4_step.hpp"

namespace pardyn::plugins {
namespace {

class Rk4 final : public Integrator {
 public:
  explicit Rk4(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  bool particle_state() const override { return true; }
  void set_dt(double dt) override { dt_ = dt; }

  void step(StepContext& ctx) override {
    // Allocated on the first step, when the store is filled.
    work_.fit(ctx.ops(), ctx.store());
    ctx.ops().get_derivative(ctx.store(), *work_.k[0]);
    rk4_step(ctx, dt_, work_, *work_.k[0]);
  }

 private:
  double dt_;
  Rk4Work work_;
};

void register_rk4(Registrar& r) {
  FactoryInfo f;
  f.name = "rk4";
  f.summary = "classic 4th-order Runge-Kutta on (x, v): 4 force evaluations per step";
  f.doc =
      "k1 = f(y), k2 = f(y + dt/2 k1), k3 = f(y + dt/2 k2), k4 = f(y + dt k3),\n"
      "y += dt/6 (k1 + 2 k2 + 2 k3 + k4), with y = (x, v) and f(y) = (v, a(x)).\n"
      "Fourth order; four force evaluations per step (k1 reuses the previous step's forces).\n"
      "Not symplectic: the energy error drifts, though slowly at small dt. Use it for short,\n"
      "accurate runs and as a reference; for long runs prefer yoshida4 (same order, 3\n"
      "evaluations, no drift), and for close encounters dopri5 (adaptive).\n"
      "Boundaries are applied at every stage; with reflecting walls a stage that bounces is only\n"
      "first order, so use leapfrog there.";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  r.add(std::move(f), Factory<Integrator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Integrator>(new Rk4(p.real("dt")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_rk4)
