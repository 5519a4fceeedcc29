// SPDX-License-Identifier: BSD-3-Clause
// The real gas's long-range part, measured three ways against all_pairs: cell_list far zones (the
// pyramid, with its rings and quadrupole options) and the tree (theta), on one 2D real-gas state.
// Prints, for each, the RMS force error against all_pairs in double (RMS |a - a_ref| / RMS |a_ref|,
// the measure of docs/cell-list.md, and the RMS of the per-particle relative error) and the time
// of one force evaluation (scheme update + forces, float, median of 5 after a warm-up).
//
//   bench_far_error [--backend cuda|cpu] [--n N] [--attraction A] [--reference 1|0]
//     N particles of soft_gas (attraction A, 0.003 by default: the example's), at the example's
//     density (2500 in 72 x 72): half in droplets (hexagonal patches of spacing 1, radius 3 to 8),
//     half a uniform gas, between walls. --reference 0 skips all_pairs (timing only, large N).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/app/registry.hpp"
#include "tree_systems.hpp"

using namespace pardyn;

namespace {

Registry& registry() { return tree_systems::builtin_registry(); }
ParamSet params(PluginKind kind, const std::string& name, const std::string& toml) {
  return tree_systems::plugin_params(kind, name, toml);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

HostParticles gas(std::size_t n, double& side, unsigned seed) {
  side = 72.0 * std::sqrt(double(n) / 2500.0);  // the example's density
  return tree_systems::gas2d(n, side, seed);
}

struct Outcome {
  HostParticles acc;
  double seconds = 0;
};

Outcome forces(const HostParticles& in, const Box& box, Backend b, Precision prec,
               const std::string& law, const std::string& scheme, const std::string& sp,
               int repeats) {
  RunInfo run;
  run.dim = 2;
  run.precision = prec;
  run.backend = b;
  run.box = box;
  auto pot =
      registry().make_potential("soft_gas", params(PluginKind::Potential, "soft_gas", law), run);
  auto sch = registry().make_scheme(scheme, params(PluginKind::Scheme, scheme, sp), run);
  ParticleStore s(2, prec, b == Backend::Cuda ? cuda::device_memory() : host_memory());
  s.upload(in);
  auto ops = b == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ForceRequest req;
  req.box = &run.box;
  std::vector<double> t;
  for (int r = 0; r < repeats + 1; ++r) {
    ops->zero_forces(s, false, false);
    if (b == Backend::Cuda) cuda::synchronize("bench_far_error");
    const double t0 = now();
    sch->update(s, run.box, pot->reach());
    pot->compute(s, sch->neighbourhood(), req);
    if (b == Backend::Cuda) cuda::synchronize("bench_far_error");
    if (r > 0) t.push_back(now() - t0);  // the first is a warm-up
  }
  std::sort(t.begin(), t.end());
  Outcome o;
  s.download(o.acc, ParticleStore::kAcceleration);
  o.seconds = t.empty() ? 0 : t[t.size() / 2];
  return o;
}

void errors(const HostParticles& a, const HostParticles& ref, double& rms_rms, double& rel) {
  double num = 0, den = 0, r2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    double e = 0, m = 0;
    for (int d = 0; d < 2; ++d) {
      e += std::pow(a.a[d][i] - ref.a[d][i], 2);
      m += ref.a[d][i] * ref.a[d][i];
    }
    num += e;
    den += m;
    r2 += m > 0 ? e / m : 0;
  }
  rms_rms = std::sqrt(num / den);
  rel = std::sqrt(r2 / double(ref.size()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Backend backend = cuda::device_count() > 0 ? Backend::Cuda : Backend::Cpu;
    std::size_t n = 100000;
    double attraction = 0.003;
    bool reference = true;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string k = argv[i], v = argv[i + 1];
      if (k == "--backend") backend = v == "cuda" ? Backend::Cuda : Backend::Cpu;
      else if (k == "--n") n = std::size_t(std::atof(v.c_str()));
      else if (k == "--attraction") attraction = std::atof(v.c_str());
      else if (k == "--reference") reference = v != "0";
      else throw Error("unknown option " + k);
    }
    double side = 0;
    const HostParticles hp = gas(n, side, 7);
    Box box;
    for (int d = 0; d < 2; ++d) {
      box.lo[d] = 0;
      box.hi[d] = side;
      box.boundary[d] = Boundary::Wall;
    }
    const std::string law = "attraction = " + std::to_string(attraction);
    std::printf("soft_gas 2D, N = %zu, box %.1f, attraction %g, backend %s\n", n, side, attraction,
                to_string(backend));
    HostParticles ref;
    if (reference) {
      const double t0 = now();
      ref = forces(hp, box, backend, Precision::Double, law, "all_pairs", "", 0).acc;
      std::printf("all_pairs reference (double): %.2f s\n", now() - t0);
    }
    struct Variant {
      const char* scheme;
      std::string params;
    };
    const Variant variants[] = {
        {"cell_list", "cell_size = 6.0\nrings = 1\nquadrupole = false"},
        {"cell_list", "cell_size = 6.0\nrings = 1"},
        {"cell_list", "cell_size = 6.0\nrings = 2\nquadrupole = false"},
        {"cell_list", "cell_size = 6.0"},
        {"cell_list", "cell_size = 6.0\nrings = 3"},
        {"cell_list", ""},
        {"cell_list", "rings = 1"},
        {"tree", "theta = 0.7"},
        {"tree", "theta = 0.5"},
        {"tree", "theta = 0.3"},
    };
    std::printf("%-10s %-40s %12s %12s %14s\n", "scheme", "parameters", "rms/rms", "rms rel",
                "float ms/eval");
    for (const Variant& v : variants) {
      double rr = 0, rel = 0;
      if (reference) {
        const Outcome d = forces(hp, box, backend, Precision::Double, law, v.scheme, v.params, 0);
        errors(d.acc, ref, rr, rel);
      }
      const Outcome f = forces(hp, box, backend, Precision::Float, law, v.scheme, v.params, 5);
      std::string p = v.params;
      std::replace(p.begin(), p.end(), '\n', ' ');
      if (p.empty()) p = "(defaults)";
      std::printf("%-10s %-40s %12.3g %12.3g %14.3f\n", v.scheme, p.c_str(), rr, rel,
                  1e3 * f.seconds);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_far_error: %s\n", e.what());
    return 1;
  }
}
