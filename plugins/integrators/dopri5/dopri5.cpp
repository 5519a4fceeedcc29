// SPDX-License-Identifier: BSD-3-Clause
// dopri5: the Dormand-Prince 5(4) embedded Runge-Kutta pair (Dormand & Prince 1980; Hairer,
// Norsett & Wanner, Solving ODEs I, II.5) on the state y = (x, v), f(y) = (v, a(x)), with step-size
// control.
//
// Seven stages; the seventh is evaluated at the fifth-order solution itself, so its forces are the
// next step's first stage ("first same as last"): six force evaluations per accepted step, six more
// per rejected one. The difference between the fifth- and fourth-order solutions estimates the
// local error; a step is accepted when
//   err = max over particles and components |y5 - y4| / (atol + rtol max(|y_old|, |y_new|)) <= 1,
// and the next step is h min(5, max(0.2, 0.9 err^(-1/5))) (no growth right after a rejection).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

constexpr int kStages = 7;

// The Butcher tableau, row i = stage i + 1 (the first stage has no coefficients).
constexpr double kA[kStages][kStages - 1] = {
    {},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
};
// The fifth-order weights are the last row of kA (b7 = 0); these are b5 - b4, the error weights.
constexpr double kE[kStages] = {35.0 / 384 - 5179.0 / 57600,
                                0.0,
                                500.0 / 1113 - 7571.0 / 16695,
                                125.0 / 192 - 393.0 / 640,
                                -2187.0 / 6784 + 92097.0 / 339200,
                                11.0 / 84 - 187.0 / 2100,
                                -1.0 / 40};

// Step-size controller: err^(-1/5) because the error estimate is of the fourth-order solution.
constexpr double kSafety = 0.9, kShrinkMin = 0.2, kGrowMax = 5.0;

std::string format_time(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", t);
  return buf;
}

class Dopri5 final : public Integrator {
 public:
  Dopri5(double dt, double rtol, double atol, double dt_min, double dt_max, double end_time)
      : h_(dt),
        last_h_(dt),
        rtol_(rtol),
        atol_(atol),
        dt_min_(dt_min),
        dt_max_(dt_max > 0 ? dt_max : std::numeric_limits<double>::infinity()),
        end_time_(end_time) {}

  double dt() const override { return h_; }
  bool particle_state() const override { return true; }
  double last_dt() const override { return last_h_; }
  bool adaptive() const override { return true; }
  std::uint64_t rejected_steps() const override { return rejected_; }
  // Checkpoints: the next step to try, the last accepted one and the rejections so far (the stages
  // are recomputed from the store at every step).
  void save(StateOut& out) const override {
    out.real("next_dt", h_);
    out.real("last_dt", last_h_);
    out.integer("rejected_steps", std::int64_t(rejected_));
  }
  void load(StateIn& in, StepContext&) override {
    h_ = in.real("next_dt");
    last_h_ = in.real("last_dt");
    rejected_ = std::uint64_t(in.integer("rejected_steps"));
  }

  void step(StepContext& ctx) override {
    auto& s = ctx.store();
    auto& ops = ctx.ops();
    if (!y_ || n_ != s.size()) {
      n_ = s.size();
      y_ = ops.new_state(s);
      for (auto& k : k_) k = ops.new_state(s);
    }
    const StateVector* k[kStages];
    for (int i = 0; i < kStages; ++i) k[i] = k_[i].get();
    ops.get_state(s, *y_);
    // Valid on entry: the previous step's last stage, or the framework's evaluation at the start.
    // Read again rather than kept, because modifiers may have changed velocities between steps.
    ops.get_derivative(s, *k_[0]);

    bool rejected_before = false;
    for (;;) {
      double h = std::min(h_, dt_max_);
      // End exactly on [simulation] end_time: the last step is shortened to reach it.
      if (end_time_ > 0 && ctx.time() < end_time_ && ctx.time() + h > end_time_)
        h = end_time_ - ctx.time();
      for (int i = 1; i < kStages; ++i) {
        double c[kStages - 1];
        for (int j = 0; j < i; ++j) c[j] = kA[i][j] * h;
        ops.set_combination(s, *y_, i, c, k);
        ctx.apply_boundaries();
        // The last stage is the new state (FSAL): energies, if wanted, are computed there only.
        if (i + 1 < kStages) ctx.compute_stage_forces();
        else ctx.compute_forces();
        ops.get_derivative(s, *k_[i]);
      }
      // The store now holds the fifth-order solution and its forces: all an accepted step needs.
      double e[kStages];
      for (int i = 0; i < kStages; ++i) e[i] = kE[i] * h;
      const double err = ops.error_norm(s, *y_, kStages, e, k, atol_, rtol_);
      if (err <= 1.0) {
        last_h_ = h;
        double grow = err > 0 ? kSafety * std::pow(err, -0.2) : kGrowMax;
        grow = std::clamp(grow, kShrinkMin, rejected_before ? 1.0 : kGrowMax);
        h_ = std::min(h * grow, dt_max_);
        return;
      }
      ++rejected_;
      rejected_before = true;
      // A non-finite error (a stage hit a singularity) shrinks the step as much as allowed.
      const double shrink =
          std::isfinite(err) ? std::max(kShrinkMin, kSafety * std::pow(err, -0.2)) : kShrinkMin;
      h_ = h * shrink;
      ops.set_state(s, *y_);
      if (h_ < dt_min_) {
        // Leave the last good state with its forces, so that what is observed is consistent.
        ctx.apply_boundaries();
        ctx.compute_forces();
        throw Error("dopri5: the step fell below dt_min = " + format_time(dt_min_) + " at time " +
                    format_time(ctx.time()) + " (step " + std::to_string(ctx.step()) +
                    "): the error estimate stays above the tolerance (at " + format_time(err) +
                    " times it; rtol = " + format_time(rtol_) + ", atol = " + format_time(atol_) +
                    "). Usually a close encounter or collision that the force "
                    "law makes singular: soften the potential (eps), loosen rtol/atol, or lower "
                    "dt_min if such short steps are really wanted");
      }
    }
  }

 private:
  double h_;       // the next step to try
  double last_h_;  // the last accepted step
  double rtol_, atol_, dt_min_, dt_max_;
  double end_time_;  // [simulation] end_time, 0 if none
  std::uint64_t rejected_ = 0;
  std::size_t n_ = 0;
  std::unique_ptr<StateVector> y_;
  std::unique_ptr<StateVector> k_[kStages];
};

void register_dopri5(Registrar& r) {
  FactoryInfo f;
  f.name = "dopri5";
  f.summary = "Dormand-Prince 5(4) with adaptive step: 6 force evaluations per accepted step";
  f.doc =
      "Embedded Runge-Kutta pair of orders 5 and 4 (Dormand & Prince 1980) on y = (x, v),\n"
      "f(y) = (v, a(x)), with error control. Seven stages, the last at the new state itself,\n"
      "whose forces the next step reuses (FSAL): 6 force evaluations per accepted step, 6 per\n"
      "rejected one.\n"
      "A step is accepted when max |y5 - y4| / (atol + rtol max(|y_old|, |y_new|)) <= 1 over all\n"
      "particles and components of x and v; the next step is\n"
      "  h_new = h min(5, max(0.2, 0.9 err^(-1/5))),  no growth right after a rejection,\n"
      "clamped to dt_max. `dt` is only the first step tried. A step that would fall below dt_min\n"
      "stops the run with an error naming the time. Rejected steps are counted (thermo's\n"
      "rejected_steps); the framework advances time by each accepted step, and the step size is\n"
      "thermo's dt column.\n"
      "Use it for close encounters and eccentric orbits, where it cuts the step by orders of\n"
      "magnitude only where needed (the Habr article's integrator comparison, docs/sources.md,\n"
      "recommends embedded adaptive methods in double precision). Not symplectic: the energy error "
      "drifts (on an e = 0.9 Kepler orbit with\n"
      "rtol = atol = 1e-9, by about 1e-8 relative per orbit), so for very long runs of smooth\n"
      "orbits prefer yoshida4. Its last step is shortened to end exactly on\n"
      "[simulation] end_time when one is set.";
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "first step tried (then adapted)", 0.0, std::nullopt, true)
      .real("rtol", 1e-8, "1",
            "relative tolerance of the local error per step (at least 1e-14 in double, 1e-6 in "
            "float)",
            0.0, std::nullopt, true)
      .real("atol", 1e-10, "length or length/time",
            "absolute tolerance of the local error per step (in the units of each component: "
            "length for positions, length/time for velocities)",
            0.0)
      .real("dt_min", 1e-12, "time", "smallest step allowed; a smaller one stops the run", 0.0,
            std::nullopt, true)
      .real("dt_max", 0.0, "time", "largest step allowed (0: no limit)", 0.0);
  r.add(
      std::move(f), Factory<Integrator>([](const ParamSet& p, const RunInfo& run) {
        const double dt = p.real("dt"), dt_min = p.real("dt_min"), dt_max = p.real("dt_max");
        const std::string where = p.context.empty() ? "" : " (" + p.context + ")";
        if (dt_min >= dt)
          throw Error("dopri5: dt_min = " + format_time(dt_min) +
                      " must be below dt = " + format_time(dt) + where);
        if (dt_max > 0 && dt_max < dt)
          throw Error("dopri5: dt_max = " + format_time(dt_max) +
                      " must be at least dt = " + format_time(dt) + " (or 0 for no limit)" + where);
        // Below a few units of round-off the error estimate is noise and no step is accepted.
        const double rtol_floor = run.precision == Precision::Float ? 1e-6 : 1e-14;
        if (p.real("rtol") < rtol_floor)
          throw Error("dopri5: rtol = " + format_time(p.real("rtol")) + " is below what " +
                      to_string(run.precision) +
                      " precision resolves: set rtol >= " + format_time(rtol_floor) +
                      (run.precision == Precision::Float ? " or use precision = \"double\"" : "") +
                      where);
        return std::unique_ptr<Integrator>(
            new Dopri5(dt, p.real("rtol"), p.real("atol"), dt_min, dt_max, run.end_time));
      }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_dopri5)
