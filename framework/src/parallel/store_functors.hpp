// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the per-particle work of the parallel store operations (store_ops.hpp),
// each written once as a functor (for_each.hpp) and run by the loop of the store's backend:
// store_ops.cpp on the CPU, store_ops_cuda.cu on the GPU (which instantiates every functor listed in
// PARDYN_STORE_FUNCTORS for the CPU side's for_each_index(Backend, ...)).
#pragma once

#include <cstdint>
#include <cstring>

#include "pardyn/for_each.hpp"
#include "pardyn/particles.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel::fn {

// A migration record (record_bytes()): x, v (Dim each) and mass in Real, type, id, image (Dim).
template <class Real, int Dim>
struct RecordLayout {
  static constexpr std::size_t reals = (2 * Dim + 1) * sizeof(Real);
  static constexpr std::size_t type = reals, id = reals + 4, image = reals + 12;
};

// Particles idx[k] of p into records out + k rb.
template <class Real, int Dim>
struct GatherRecords {
  ParticleView<Real, Dim> p;
  const std::uint32_t* idx;
  char* out;
  std::size_t rb;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    using L = RecordLayout<Real, Dim>;
    const std::uint32_t i = idx[k];
    char* o = out + k * rb;
    Real r[2 * Dim + 1];
    std::int32_t img[Dim];
    for (int d = 0; d < Dim; ++d) r[d] = p.x[d][i], r[Dim + d] = p.v[d][i], img[d] = p.image[d][i];
    r[2 * Dim] = p.mass[i];
    const std::int32_t t = p.type[i];
    const std::int64_t id = p.id[i];
    memcpy(o, r, sizeof r);
    memcpy(o + L::type, &t, 4);
    memcpy(o + L::id, &id, 8);
    memcpy(o + L::image, img, sizeof img);
  }
};

// Records in + k rb into particles n0 + k of p (accelerations, energies and virials zero).
template <class Real, int Dim>
struct AppendRecords {
  ParticleView<Real, Dim> p;
  std::size_t n0;
  const char* in;
  std::size_t rb;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    using L = RecordLayout<Real, Dim>;
    const std::size_t i = n0 + k;
    const char* r0 = in + k * rb;
    Real r[2 * Dim + 1];
    std::int32_t t, img[Dim];
    std::int64_t id;
    memcpy(r, r0, sizeof r);
    memcpy(&t, r0 + L::type, 4);
    memcpy(&id, r0 + L::id, 8);
    memcpy(img, r0 + L::image, sizeof img);
    for (int d = 0; d < Dim; ++d) {
      p.image[d][i] = img[d];
      p.x[d][i] = r[d];
      p.v[d][i] = r[Dim + d];
      p.a[d][i] = Real(0);
    }
    p.mass[i] = r[2 * Dim];
    p.type[i] = t;
    p.id[i] = id;
    p.epot[i] = p.virial[i] = Real(0);
  }
};

// Particle src[k] of p to dst[k] (every array).
template <class Real, int Dim>
struct MoveParticles {
  ParticleView<Real, Dim> p;
  const std::uint32_t* dst;
  const std::uint32_t* src;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    const std::uint32_t a = dst[k], b = src[k];
    for (int d = 0; d < Dim; ++d) {
      p.x[d][a] = p.x[d][b];
      p.v[d][a] = p.v[d][b];
      p.a[d][a] = p.a[d][b];
      p.image[d][a] = p.image[d][b];
    }
    p.mass[a] = p.mass[b];
    p.type[a] = p.type[b];
    p.id[a] = p.id[b];
    p.epot[a] = p.epot[b];
    p.virial[a] = p.virial[b];
  }
};

// Positions of particles idx, shifted, as Dim arrays of `count` values from out.
template <class Real, int Dim>
struct GatherPositions {
  ParticleView<Real, Dim> p;
  const std::uint32_t* idx;
  std::size_t count;
  Real shift[Dim];
  Real* out;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    const std::uint32_t i = idx[k];
    for (int d = 0; d < Dim; ++d) out[std::size_t(d) * count + k] = p.x[d][i] + shift[d];
  }
};

// Masses and types of particles idx into m and t.
template <class Real, int Dim>
struct GatherStatic {
  ParticleView<Real, Dim> p;
  const std::uint32_t* idx;
  Real* m;
  std::int32_t* t;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    m[k] = p.mass[idx[k]];
    t[k] = p.type[idx[k]];
  }
};

// id[k] = -1 (ghosts have no identity).
struct ClearIds {
  std::int64_t* id;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const { id[k] = -1; }
};

// The image of x nearest c along an axis of period L.
template <class Real>
PARDYN_HD PARDYN_INLINE Real nearest_image(Real x, double c, double L) {
  const double u = double(x) - c;
  return Real(c + (u - L * nearbyint(u / L)));
}

// out = the image of x nearest c along an axis of period L.
template <class Real>
struct UnwrapAxis {
  const Real* x;
  Real* out;
  double c, L;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    out[i] = nearest_image(x[i], c, L);
  }
};

// to's accelerations (and with energy, epot and virial) += from's (Assign: = from's).
template <class Real, int Dim, bool Assign>
struct AddForces {
  ParticleView<Real, Dim> from, to;
  bool energy;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    for (int d = 0; d < Dim; ++d) to.a[d][i] = Assign ? from.a[d][i] : to.a[d][i] + from.a[d][i];
    if (energy) {
      to.epot[i] = Assign ? from.epot[i] : to.epot[i] + from.epot[i];
      to.virial[i] = Assign ? from.virial[i] : to.virial[i] + from.virial[i];
    }
  }
};

// Source records {x, y, z, m} / {x, y, m, 0} and types of the all-pairs ring.
template <class Real, int Dim>
struct PackSources {
  ParticleView<Real, Dim> p;
  Real* pos;
  std::int32_t* type;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    Real r[4];
    for (int d = 0; d < Dim; ++d) r[d] = p.x[d][i];
    r[Dim] = p.mass[i];
    if (Dim == 2) r[3] = Real(0);
    for (int c = 0; c < 4; ++c) pos[4 * i + c] = r[c];
    type[i] = p.type[i];
  }
};

// Squared displacement of particle i from ref (dim arrays of p.n values; minimum image on
// periodic axes), for max_over_index.
template <class Real, int Dim>
struct Displacement2 {
  ParticleView<Real, Dim> p;
  const Real* ref;
  PeriodicImage<Real> img;
  PARDYN_HD PARDYN_INLINE double operator()(std::size_t i) const {
    Real d2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const Real dx = img.wrap(p.x[d][i] - ref[std::size_t(d) * p.n + i], d);
      d2 += dx * dx;
    }
    return double(d2);
  }
};

// The same, while copying position i into out (unwrapped along the cut periodic axes): the owned
// positions of the domain's work store and the trigger of a new ghost choice in one pass.
template <class Real, int Dim>
struct CopyAndMeasure {
  Displacement2<Real, Dim> m;
  Unwrap unwrap;
  Real* out[3];
  PARDYN_HD PARDYN_INLINE double operator()(std::size_t i) const {
    for (int d = 0; d < Dim; ++d) {
      const Real x = m.p.x[d][i];
      out[d][i] = unwrap.period[d] > 0 ? nearest_image(x, unwrap.centre[d], unwrap.period[d]) : x;
    }
    return m(i);
  }
};

// Whether particle i lies below the slab (side 0: u < lo) or at or above it (side 1: u >= hi),
// u being its coordinate along the slab's axis relative to the centre (wrapped when periodic).
template <class Real>
struct OutsideSlab {
  const Real* x;
  Slab slab;
  PARDYN_HD PARDYN_INLINE bool operator()(std::size_t i, int side) const {
    double u = double(x[i]) - slab.centre;
    if (slab.period > 0) u -= slab.period * nearbyint(u / slab.period);
    return side == 0 ? u < slab.lo : u >= slab.hi;
  }
};
}  // namespace pardyn::parallel::fn

// Every functor above in every precision and dimension: X(F) for each, for explicit instantiations.
#define PARDYN_STORE_FUNCTORS_RD(X, T) X(T<float, 2>) X(T<float, 3>) X(T<double, 2>) X(T<double, 3>)
#define PARDYN_STORE_FUNCTORS(X)                                       \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::GatherRecords)   \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::AppendRecords)   \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::MoveParticles)   \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::GatherPositions) \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::GatherStatic)    \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::PackSources)     \
  X(::pardyn::parallel::fn::ClearIds)                                  \
  X(::pardyn::parallel::fn::UnwrapAxis<float>)                         \
  X(::pardyn::parallel::fn::UnwrapAxis<double>)                        \
  X(::pardyn::parallel::fn::AddForces<float, 2, true>)                 \
  X(::pardyn::parallel::fn::AddForces<float, 3, true>)                 \
  X(::pardyn::parallel::fn::AddForces<double, 2, true>)                \
  X(::pardyn::parallel::fn::AddForces<double, 3, true>)                \
  X(::pardyn::parallel::fn::AddForces<float, 2, false>)                \
  X(::pardyn::parallel::fn::AddForces<float, 3, false>)                \
  X(::pardyn::parallel::fn::AddForces<double, 2, false>)               \
  X(::pardyn::parallel::fn::AddForces<double, 3, false>)
// The functors of index_loops.hpp's maximum and selection, for PARDYN_MAX_OVER_CUDA and
// PARDYN_SELECT_CUDA.
#define PARDYN_STORE_MAX_FUNCTORS(X)                                 \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::Displacement2) \
  PARDYN_STORE_FUNCTORS_RD(X, ::pardyn::parallel::fn::CopyAndMeasure)
#define PARDYN_STORE_SELECT_FUNCTORS(X)         \
  X(::pardyn::parallel::fn::OutsideSlab<float>) \
  X(::pardyn::parallel::fn::OutsideSlab<double>)
