// SPDX-License-Identifier: BSD-3-Clause
// ParticleView: the particle store's arrays as kernels see them, a trivially-copyable bundle of
// pointers in one precision and dimension that is passed to a CUDA kernel by value
// (ParticleStore::view, particles.hpp). Device-clean (docs/plugins.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pardyn {

template <typename Real, int Dim>
struct ParticleView {
  using real = Real;
  static constexpr int dim = Dim;

  std::size_t n = 0;
  Real* x[3] = {nullptr, nullptr, nullptr};  // positions; x[2] is null in 2D
  Real* v[3] = {nullptr, nullptr, nullptr};  // velocities
  Real* a[3] = {nullptr, nullptr, nullptr};  // accelerations (force / mass)
  Real* mass = nullptr;
  std::int32_t* type = nullptr;
  std::int64_t* id = nullptr;
  Real* epot = nullptr;    // potential energy per particle (half of each pair's energy)
  Real* virial = nullptr;  // per-particle virial, sum over pairs of 1/2 r_ij . F_ij
  // Periodic image counts: how many box lengths each particle has been wrapped by along each axis
  // (the unwrapped position is x + image * L). image[2] is null in 2D.
  std::int32_t* image[3] = {nullptr, nullptr, nullptr};
};
static_assert(std::is_trivially_copyable_v<ParticleView<float, 3>>);

}  // namespace pardyn
