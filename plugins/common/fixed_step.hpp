// SPDX-License-Identifier: BSD-3-Clause
// What the fixed-step integrators (euler, symplectic_euler, leapfrog, yoshida4, rk4, ab5) share,
// written once: the step they hold (the scenario's `dt`, changed through set_dt, e.g. by
// dt_control) and their registration, whose one parameter is that step.
//   FixedStepIntegrator               an Integrator that holds dt_
//   fixed_step_info(name, summary, doc)
//                                     the FactoryInfo of such an integrator (CPU and CUDA; `dt`)
//   register_fixed_step<T>(r, name, summary, doc)
//                                     registers T, constructed from `dt`
// Host code; header-only, compiled into each plugin.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pardyn/plugin.hpp"

namespace pardyn::plugins {

class FixedStepIntegrator : public Integrator {
 public:
  explicit FixedStepIntegrator(double dt) : dt_(dt) {}
  double dt() const override { return dt_; }
  void set_dt(double dt) override { dt_ = dt; }

 protected:
  double dt_;
};

inline FactoryInfo fixed_step_info(const std::string& name, const std::string& summary,
                                   const std::string& doc) {
  FactoryInfo f;
  f.name = name;
  f.summary = summary;
  f.doc = doc;
  f.backends = kCpu | kCuda;
  f.schema.real("dt", 1e-3, "time", "time step", 0.0, std::nullopt, true);
  return f;
}

template <class T>
void register_fixed_step(Registrar& r, const std::string& name, const std::string& summary,
                         const std::string& doc) {
  r.add(fixed_step_info(name, summary, doc),
        Factory<Integrator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Integrator>(new T(p.real("dt")));
        }));
}

}  // namespace pardyn::plugins
