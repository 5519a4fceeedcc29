// SPDX-License-Identifier: BSD-3-Clause
// symplectic_euler: the semi-implicit (symplectic) Euler method, kick then drift. First order like
// explicit Euler, but symplectic: the energy error stays bounded instead of drifting. One force
// evaluation per step.
//
//   v(t + dt) = v(t) + a(x(t)) dt
//   x(t + dt) = x(t) + v(t + dt) dt
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

class SymplecticEuler final : public Integrator {
 public:
  explicit SymplecticEuler(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  void set_dt(double dt) override { dt_ = dt; }
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ops.kick(ctx.store(), dt_);  // with a(t), valid on entry
    ctx.drift(dt_);              // with the new velocities: this is what makes it symplectic
    ctx.compute_forces();
  }

 private:
  double dt_;
};

void register_symplectic_euler(Registrar& r) {
  FactoryInfo f;
  f.name = "symplectic_euler";
  f.summary = "symplectic (semi-implicit) Euler, kick then drift: 1st order, symplectic";
  f.doc =
      "v += a(x) dt;  x += v dt;  (forces at the new x).\n"
      "First order, symplectic (not time-reversible): the energy error oscillates with an\n"
      "amplitude proportional to dt but does not drift, unlike explicit Euler. One force\n"
      "evaluation per step. Its positions are leapfrog's and its velocities leapfrog's half-step\n"
      "ones, so leapfrog costs the same and is one order better: use this one for teaching or\n"
      "comparisons.";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  r.add(std::move(f), Factory<Integrator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Integrator>(new SymplecticEuler(p.real("dt")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_symplectic_euler)
