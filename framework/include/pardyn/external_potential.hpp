// SPDX-License-Identifier: BSD-3-Clause
// ExternalPotential<Law>: turns an external law (a field acting on each particle alone: a uniform
// field, soft walls) into a Potential plugin object, with the loop written once here (CPU, OpenMP)
// and in external_potential_cuda.cuh (GPU).
//
// An external law is a struct `Law` with
//   - `static FactoryInfo info()`: name, summary, documentation, dimensions, parameter schema;
//   - `struct Params` with `static Params from(const ParamSet&, const RunInfo&)`: the validated
//     parameters in double (the run's dimension and box are there to check them against);
//   - `template <typename Real> struct Evaluator`: trivially copyable, built from (Params, Box,
//   dim),
//     with
//         PARDYN_HD void one(const Real (&x)[3], Real m, int type, Real (&f)[3], Real& e) const;
//     which, for one particle at x (x[2] = 0 in 2D) of mass m and type `type`, sets
//       f: the force on it (f[2] is ignored in 2D; f arrives zeroed), and
//       e: its potential energy in the field,
//     and the optional member
//         static constexpr bool per_unit_mass = true;  // f and e are per unit mass (a uniform
//         field)
//
// The virial: an external force adds nothing to the per-particle virial. Its x.F depends on where
// the origin is (a uniform field) and, for walls, is the wall pressure itself: with it the virial
// pressure (2K + W)/(dim V) of a walled box would average to zero. The virial pressure stays the
// pressure of the interparticle forces.
//
// supports() is true for every neighbourhood (the scheme is not used) and external() is true.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/external_potential.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <memory>
#include <string>

#include "pardyn/evaluator.hpp"
#include "pardyn/law_potential.hpp"
#include "pardyn/params.hpp"
#include "pardyn/potential.hpp"
#include "pardyn/registration.hpp"

namespace pardyn {

#if defined(PARDYN_PLUGIN_HAS_CUDA)
namespace cuda {
// Defined in the plugin's .cu file by PARDYN_EXTERNAL_POTENTIAL_CUDA(Law).
template <class Law>
void external_compute(const typename Law::Params& params, ParticleStore& s,
                      const ForceRequest& req);
}  // namespace cuda
#endif

// Adds one particle's force and energy from an external evaluator to the store.
template <class Eval, bool Energy, class View, class Real>
PARDYN_HD PARDYN_INLINE void add_external(const View& p, std::size_t i, const Real (&f)[3],
                                          Real e) {
  static_assert(std::is_trivially_copyable_v<Eval>,
                "an evaluator must be trivially copyable: it is passed to GPU kernels by value");
  const Real m = p.mass[i];
  const Real to_acc = detail::per_unit_mass_of<Eval>::value ? Real(1) : Real(1) / m;
  for (int d = 0; d < View::dim; ++d) p.a[d][i] += f[d] * to_acc;
  if constexpr (Energy) p.epot[i] += detail::per_unit_mass_of<Eval>::value ? e * m : e;
}

// Loads particle i's position as the evaluator wants it (three components, 0 beyond dim).
template <class View>
PARDYN_HD PARDYN_INLINE void load_position(const View& p, std::size_t i,
                                           typename View::real (&x)[3]) {
  x[0] = p.x[0][i];
  x[1] = p.x[1][i];
  x[2] = View::dim == 3 ? p.x[View::dim - 1][i] : typename View::real(0);
}

// Adds the external evaluator's force on particle i (and with Energy its energy) to the store: the
// body of the CPU loop below and of the GPU kernel (external_potential_cuda.cuh).
template <bool Energy, class Eval, class View>
PARDYN_HD PARDYN_INLINE void external_one(const Eval& ev, const View& p, std::size_t i) {
  typename View::real x[3], f[3] = {0, 0, 0}, e = 0;
  load_position(p, i, x);
  ev.one(x, p.mass[i], p.type[i], f, e);
  add_external<Eval, Energy>(p, i, f, e);
}

namespace cpu {
// Adds the external evaluator's forces (and with Energy its energies) of every particle to the
// store.
template <bool Energy, class Eval, class View>
void external_forces(const Eval& ev, const View& p) {
  const std::size_t n = p.n;
#pragma omp parallel for schedule(static) if (n > 16384)
  for (std::size_t i = 0; i < n; ++i) external_one<Energy>(ev, p, i);
}
}  // namespace cpu

template <class Law>
class ExternalPotential final : public Potential {
 public:
  using Params = typename Law::Params;
  explicit ExternalPotential(const Params& p) : params_(p) {}

  bool supports(NeighbourhoodKind) const override { return true; }
  bool external() const override { return true; }
  // No pair interaction: the scheme (all_pairs by default, which builds nothing) is not used.
  double cutoff() const override { return 0.0; }

  void compute(ParticleStore& s, const Neighbourhood&, const ForceRequest& req) override {
    if (s.backend() == Backend::Cuda)
      return law_on_gpu<Law>(PARDYN_CUDA_ONLY(&cuda::external_compute<Law>), params_, s, req);
    visit(s, [&](auto view) {
      using View = decltype(view);
      const typename Law::template Evaluator<typename View::real> ev(params_, *req.box, View::dim);
      if (req.energy || req.virial) cpu::external_forces<true>(ev, view);
      else cpu::external_forces<false>(ev, view);
    });
  }

  const Params& params() const { return params_; }

 private:
  Params params_;
};

template <class Law>
void register_external_potential(Registrar& r) {
  r.add(law_potential_info<Law>(), Factory<Potential>([](const ParamSet& ps, const RunInfo& run) {
          return std::unique_ptr<Potential>(new ExternalPotential<Law>(Law::Params::from(ps, run)));
        }));
}

}  // namespace pardyn

// The whole registration of a plugin that holds one external law (law_potential.hpp).
#define PARDYN_EXTERNAL_POTENTIAL_PLUGIN(Law) \
  PARDYN_LAW_PLUGIN(::pardyn::register_external_potential, Law)
