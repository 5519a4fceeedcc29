// leapfrog: kick-drift-kick (velocity Verlet). Second order, symplectic and time-reversible: the
// energy error stays bounded instead of drifting. One force evaluation per step.
//
//   v(t + dt/2) = v(t) + a(t) dt/2
//   x(t + dt)   = x(t) + v(t + dt/2) dt
//   v(t + dt)   = v(t + dt/2) + a(t + dt) dt/2
#include "pardyn/plugin.hpp"

namespace pardyn::plugins {
namespace {

class Leapfrog final : public Integrator {
public:
  explicit Leapfrog(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ops.kick(ctx.store(), 0.5 * dt_);
    ops.drift(ctx.store(), dt_);
    ctx.apply_boundaries();
    ctx.compute_forces();
    ops.kick(ctx.store(), 0.5 * dt_);
  }

private:
  double dt_;
};

void register_leapfrog(Registrar& r) {
  FactoryInfo f;
  f.name = "leapfrog";
  f.summary = "kick-drift-kick leapfrog (velocity Verlet): 2nd order, symplectic";
  f.doc =
      "v += a dt/2;  x += v dt;  (forces at the new x);  v += a dt/2.\n"
      "Second order, symplectic, time-reversible: the energy error oscillates but does not drift.\n"
      "One force evaluation per step. The default integrator.";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  r.add(std::move(f), Factory<Integrator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Integrator>(new Leapfrog(p.real("dt")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_leapfrog)
