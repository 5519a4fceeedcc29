// SPDX-License-Identifier: BSD-3-Clause
// euler: the explicit (forward) Euler method. First order and not symplectic: the energy drifts
// linearly in time. Kept as the baseline of integrator comparisons (seed 001).
//
//   x(t + dt) = x(t) + v(t) dt
//   v(t + dt) = v(t) + a(t) dt
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

class Euler final : public Integrator {
 public:
  explicit Euler(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  void set_dt(double dt) override { dt_ = dt; }
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ctx.drift(dt_);              // with v(t)
    ops.kick(ctx.store(), dt_);  // with a(t), still in the store
    ctx.compute_forces();
  }

 private:
  double dt_;
};

void register_euler(Registrar& r) {
  FactoryInfo f;
  f.name = "euler";
  f.summary = "explicit Euler: 1st order, energy drifts (a baseline)";
  f.doc =
      "x += v dt;  v += a(x_old) dt.  First order, not symplectic: the energy error grows\n"
      "linearly with time. One force evaluation per step. Use it only as a baseline.";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  r.add(std::move(f), Factory<Integrator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Integrator>(new Euler(p.real("dt")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_euler)
