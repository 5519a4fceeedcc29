// SPDX-License-Identifier: BSD-3-Clause
// Test systems and error measures shared by the tree's benchmark (bench/tree_bench.cpp) and its
// tests (tests/test_tree.cpp): a 3D Plummer sphere from the plummer generator, a 2D Plummer disk,
// and relative force errors (RMS, 99th percentile, maximum). In the test-support library
// (pardyn_test_systems, tests/support/CMakeLists.txt) that both link.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"

namespace pardyn::tree_systems {

// A Plummer sphere (scale radius 1, total mass 1, in virial equilibrium) of n particles.
inline HostParticles plummer(const Registry& reg, std::size_t n, unsigned seed) {
  Schema s = reg.find(PluginKind::Generator, "plummer")->schema;
  s.merge(particles_common_schema());
  auto gen = reg.make_generator(
      "plummer", parse_params(s, "count = " + std::to_string(n), "plummer"), RunInfo{});
  std::mt19937_64 rng(seed);
  Box box;
  GenerateContext ctx{3, &box, &rng, "."};
  ctx.seed = seed;  // the generator's chunk streams
  HostParticles hp = gen->generate(ctx);
  hp.type.assign(hp.size(), 0);
  hp.id.resize(hp.size());
  for (std::size_t i = 0; i < hp.size(); ++i) hp.id[i] = std::int64_t(i);
  for (int d = 0; d < 3; ++d) hp.v[d].resize(hp.size());
  return hp;
}

// A 2D Plummer disk at rest: surface density ~ (1 + r^2)^-2, M(<r) = r^2 / (1 + r^2), cut at 99%
// of the mass; total mass 1.
inline HostParticles disk2d(std::size_t n, unsigned seed) {
  HostParticles hp(2);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double f = 0.99 * u(rng), r = std::sqrt(f / (1 - f)), phi = 2 * M_PI * u(rng);
    hp.x[0][i] = r * std::cos(phi);
    hp.x[1][i] = r * std::sin(phi);
    hp.mass[i] = 1.0 / double(n);
    hp.id[i] = std::int64_t(i);
  }
  return hp;
}

struct Errors {
  double rms = 0, p99 = 0, max = 0;
};

// Relative force errors |a - a_ref| / |a_ref| of the particles idx[k] of `a`, whose reference
// accelerations are ref[dim k + d].
inline Errors errors(const HostParticles& a, const std::vector<std::size_t>& idx,
                     const std::vector<double>& ref) {
  const int dim = a.dim;
  std::vector<double> rel(idx.size());
  double s2 = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    double e2 = 0, r2 = 0;
    for (int d = 0; d < dim; ++d) {
      const double r = ref[dim * k + d], v = a.a[d][idx[k]];
      e2 += (v - r) * (v - r);
      r2 += r * r;
    }
    rel[k] = std::sqrt(e2 / r2);
    s2 += e2 / r2;
  }
  Errors e;
  e.rms = std::sqrt(s2 / double(rel.size()));
  std::sort(rel.begin(), rel.end());
  e.p99 = rel[std::min(rel.size() - 1, std::size_t(0.99 * double(rel.size())))];
  e.max = rel.back();
  return e;
}

// The same over every particle, against the accelerations of `ref`.
inline Errors errors(const HostParticles& a, const HostParticles& ref) {
  std::vector<std::size_t> idx(ref.size());
  std::vector<double> r(ref.dim * ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    idx[i] = i;
    for (int d = 0; d < ref.dim; ++d) r[ref.dim * i + d] = ref.a[d][i];
  }
  return errors(a, idx, r);
}

// A 2D real-gas state of n unit masses in a square of side `side`: half the particles in droplets
// (hexagonal patches at spacing 1, soft_gas's well, radius 3 to 8, slightly jittered), half a
// uniform gas.
inline HostParticles gas2d(std::size_t n, double side, unsigned seed) {
  HostParticles hp(2);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x, y;
  const double L = side;
  while (x.size() < n / 2) {
    const double R = 3 + 5 * u(rng);
    const double cx = R + 1 + (L - 2 * R - 2) * u(rng), cy = R + 1 + (L - 2 * R - 2) * u(rng);
    for (int i = -9; i <= 9; ++i)
      for (int j = -9; j <= 9; ++j) {
        const double px = i + 0.5 * j, py = j * 0.8660254;
        if (px * px + py * py < R * R && x.size() < n / 2) {
          x.push_back(cx + px + 0.05 * (u(rng) - 0.5));
          y.push_back(cy + py + 0.05 * (u(rng) - 0.5));
        }
      }
  }
  while (x.size() < n) {
    x.push_back(L * u(rng));
    y.push_back(L * u(rng));
  }
  hp.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    hp.x[0][i] = x[i];
    hp.x[1][i] = y[i];
    hp.mass[i] = 1;
    hp.id[i] = std::int64_t(i);
  }
  return hp;
}

// RMS of |a - ref| over RMS of |ref|: the far-zone error measure of docs/cell-list.md.
inline double rms_over_rms(const HostParticles& a, const HostParticles& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    for (int d = 0; d < ref.dim; ++d) {
      num += (a.a[d][i] - ref.a[d][i]) * (a.a[d][i] - ref.a[d][i]);
      den += ref.a[d][i] * ref.a[d][i];
    }
  return std::sqrt(num / den);
}

// For benchmark programs: the built-in plugins, loaded once, and a plugin's parameters from TOML.
inline Registry& builtin_registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->load_path(Registry::builtin_plugin_dir());
    reg->throw_if_refused();
    return reg;
  }();
  return *r;
}
inline ParamSet plugin_params(PluginKind kind, const std::string& name, const std::string& toml) {
  const FactoryInfo* info = builtin_registry().find(kind, name);
  if (!info) throw Error("no plugin " + name);
  return parse_params(info->schema, toml, name);
}

}  // namespace pardyn::tree_systems
