// SPDX-License-Identifier: BSD-3-Clause
// leapfrog: kick-drift-kick (velocity Verlet). Second order, symplectic and time-reversible: the
// energy error stays bounded instead of drifting. One force evaluation per step.
//
//   v(t + dt/2) = v(t) + a(t) dt/2
//   x(t + dt)   = x(t) + v(t + dt/2) dt
//   v(t + dt)   = v(t + dt/2) + a(t + dt) dt/2
#include <string>

#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

class Leapfrog final : public Integrator {
 public:
  explicit Leapfrog(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  void set_dt(double dt) override { dt_ = dt; }
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ops.kick(ctx.store(), 0.5 * dt_);
    ctx.drift(dt_);
    ctx.compute_forces();
    ops.kick(ctx.store(), 0.5 * dt_);
  }

 private:
  double dt_;
};

FactoryInfo leapfrog_info(const std::string& name, const std::string& summary) {
  FactoryInfo f;
  f.name = name;
  f.summary = summary;
  f.doc =
      "v += a dt/2;  x += v dt;  (forces at the new x);  v += a dt/2.\n"
      "Second order, symplectic, time-reversible: the energy error oscillates but does not drift.\n"
      "One force evaluation per step. The default integrator. `leapfrog` and `velocity_verlet`\n"
      "are two names of this same method (kick-drift-kick leapfrog is velocity Verlet).";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  return f;
}

void register_leapfrog(Registrar& r) {
  const Factory<Integrator> make = [](const ParamSet& p, const RunInfo&) {
    return std::unique_ptr<Integrator>(new Leapfrog(p.real("dt")));
  };
  r.add(leapfrog_info("leapfrog",
                      "kick-drift-kick leapfrog (velocity Verlet): 2nd order, symplectic"),
        make);
  // The name most molecular dynamics users look for.
  r.add(leapfrog_info("velocity_verlet",
                      "velocity Verlet: an alias of leapfrog (2nd order, "
                      "symplectic)"),
        make);
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_leapfrog)
