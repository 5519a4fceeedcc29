// SPDX-License-Identifier: BSD-3-Clause
// The parallel engines' store operations, each written once: the loops are functors
// (store_functors.hpp) run by the store's backend; where buffers live is buffers.cpp's business.
#include "store_ops.hpp"

#include "backend/index_loops.hpp"
#include "store_functors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace pardyn::parallel {

// ---------------------------------------------------------------------------------------------------
std::size_t record_bytes(const ParticleStore& s) {
  const std::size_t real = s.precision() == Precision::Float ? 4 : 8;
  return (2 * std::size_t(s.dim()) + 1) * real + (std::size_t(s.dim()) + 1) * sizeof(std::int32_t) +
         sizeof(std::int64_t);
}

void gather_records(const ParticleStore& s, IndexList& idx, std::vector<char>& out) {
  const std::size_t rb = record_bytes(s);
  const std::size_t base = out.size();
  out.resize(base + rb * idx.size());
  if (idx.size() == 0) return;
  const Staged st(s, out.data() + base, rb * idx.size());
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for_each_index(s.backend(), idx.size(),
                   fn::GatherRecords<Real, Dim>{p, idx.device(s.backend()), st.data(), rb});
  });
  st.to_host();
}

void append_records(ParticleStore& s, const char* records, std::size_t count) {
  if (count == 0) return;
  const std::size_t n0 = s.size();
  s.resize(n0 + count);
  const std::size_t rb = record_bytes(s);
  const Staged st(s, const_cast<char*>(records), rb * count);  // only read
  st.to_device();
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for_each_index(s.backend(), count, fn::AppendRecords<Real, Dim>{p, n0, st.data(), rb});
  });
}

void remove_particles(ParticleStore& s, const std::vector<std::uint32_t>& idx) {
  if (idx.empty()) return;
  const std::size_t n = s.size();
  const std::size_t keep = n - idx.size();
  // Holes below `keep` are filled by survivors from the tail [keep, n), in order.
  std::vector<std::uint32_t> dst, src;
  std::size_t h = 0;  // next hole (index into idx) below keep
  std::size_t r = 0;  // next removed index at or above keep
  while (r < idx.size() && idx[r] < keep) ++r;
  for (std::size_t j = keep; j < n; ++j) {
    if (r < idx.size() && idx[r] == j) {
      ++r;
      continue;
    }
    dst.push_back(idx[h++]);
    src.push_back(std::uint32_t(j));
  }
  // Kept between calls: a device store's index buffers are allocated once.
  static IndexList d, q;
  d.host = std::move(dst);
  q.host = std::move(src);
  d.changed();
  q.changed();
  const Backend b = s.backend();
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for_each_index(b, d.host.size(), fn::MoveParticles<Real, Dim>{p, d.device(b), q.device(b)});
  });
  s.resize(keep);
}

void select_slab(const ParticleStore& s, std::size_t begin, std::size_t end, const Slab& slab,
                 IndexList& lo, IndexList& hi) {
  const std::size_t n = end > begin ? end - begin : 0;
  const Backend b = s.backend();
  std::uint32_t* const out[2] = {lo.buffer(b, n), hi.buffer(b, n)};
  std::size_t count[2] = {0, 0};
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    select_index(b, begin, end, fn::OutsideSlab<Real>{p.x[slab.axis], slab}, 2, out, count);
  });
  lo.set_count(count[0]);
  hi.set_count(count[1]);
}

void gather_positions(const ParticleStore& from, IndexList& idx, const double* shift,
                      std::vector<char>& out) {
  const std::size_t real = from.precision() == Precision::Float ? 4 : 8;
  out.resize(idx.size() * std::size_t(from.dim()) * real);
  if (idx.size() == 0) return;
  const Staged st(from, out.data(), out.size());
  pack_positions(from, idx, shift, st.data());
  st.to_host();
}

void put_positions(ParticleStore& to, std::size_t offset, std::size_t count, const char* data) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for (int d = 0; d < Dim; ++d)
      to.memory().copy_from_host(p.x[d] + offset, data + std::size_t(d) * count * sizeof(Real),
                                 count * sizeof(Real));
  });
}

std::size_t static_bytes(const ParticleStore& s) {
  return (s.precision() == Precision::Float ? 4 : 8) + sizeof(std::int32_t);
}

void gather_static(const ParticleStore& from, IndexList& idx, std::vector<char>& out) {
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const std::size_t c = idx.size();
    out.resize(c * (sizeof(Real) + sizeof(std::int32_t)));
    if (c == 0) return;
    const Staged st(from, out.data(), out.size());
    Real* m = reinterpret_cast<Real*>(st.data());
    std::int32_t* t = reinterpret_cast<std::int32_t*>(st.data() + c * sizeof(Real));
    for_each_index(from.backend(), c,
                   fn::GatherStatic<Real, Dim>{p, idx.device(from.backend()), m, t});
    st.to_host();
  });
}

void put_static(ParticleStore& to, std::size_t offset, std::size_t count, const char* data) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    to.memory().copy_from_host(p.mass + offset, data, count * sizeof(Real));
    to.memory().copy_from_host(p.type + offset, data + count * sizeof(Real),
                               count * sizeof(std::int32_t));
    for_each_index(to.backend(), count, fn::ClearIds{p.id + offset});
  });
}

void copy_prefix(const ParticleStore& from, ParticleStore& to, std::size_t n, bool all,
                 const Unwrap& unwrap) {
  if (n == 0) return;
  MemoryResource& mem = from.memory();
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const auto q = to.view<Real, Dim>();
    for (int d = 0; d < Dim; ++d) {
      if (unwrap.period[d] > 0) {
        const fn::UnwrapAxis<Real> f{p.x[d], q.x[d], unwrap.centre[d], unwrap.period[d]};
        for_each_index(from.backend(), n, f, 65536);
      } else {
        mem.copy(q.x[d], p.x[d], n * sizeof(Real));
      }
    }
    if (all) {
      mem.copy(q.mass, p.mass, n * sizeof(Real));
      mem.copy(q.type, p.type, n * sizeof(std::int32_t));
      mem.copy(q.id, p.id, n * sizeof(std::int64_t));
    }
  });
}

void add_forces(const ParticleStore& from, ParticleStore& to, std::size_t n, bool energy,
                bool assign) {
  const Backend b = from.backend();
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const auto q = to.view<Real, Dim>();
    if (assign) for_each_index(b, n, fn::AddForces<Real, Dim, true>{p, q, energy}, 65536);
    else for_each_index(b, n, fn::AddForces<Real, Dim, false>{p, q, energy}, 65536);
  });
}

// ---------------------------------------------------------------------------------------------------
struct Reference::Impl {
  MemoryResource* memory = nullptr;  // where ref lives: the store's memory
  void* ref = nullptr;
  std::size_t bytes = 0, n = 0;
  ~Impl() {
    if (ref) memory->deallocate(ref);
  }
};
Reference::Reference() : impl_(std::make_unique<Impl>()) {}
Reference::~Reference() = default;

void Reference::save(const ParticleStore& s) {
  Impl& m = *impl_;
  const std::size_t real = s.precision() == Precision::Float ? 4 : 8;
  const std::size_t bytes = s.size() * std::size_t(s.dim()) * real;
  if (m.memory != &s.memory() || bytes > m.bytes) {
    if (m.ref) m.memory->deallocate(m.ref);
    m.memory = &s.memory();
    m.bytes = bytes + bytes / 4 + 64;
    m.ref = m.memory->allocate(m.bytes);
  }
  m.n = s.size();
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for (int d = 0; d < Dim; ++d)
      m.memory->copy(static_cast<Real*>(m.ref) + std::size_t(d) * m.n, p.x[d], m.n * sizeof(Real));
  });
}

double Reference::max_displacement2(const ParticleStore& s, const Box& box) const {
  const Impl& m = *impl_;
  if (m.n != s.size() || m.memory != &s.memory()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const fn::Displacement2<Real, Dim> f{p, static_cast<const Real*>(m.ref),
                                         PeriodicImage<Real>::make(box)};
    worst = max_over_index(s.backend(), m.n, f);
  });
  return worst;
}

double Reference::copy_and_measure(const ParticleStore& s, ParticleStore& work,
                                   const Unwrap& unwrap, const Box& box) const {
  const Impl& m = *impl_;
  if (m.n != s.size() || m.memory != &s.memory() || work.size() < s.size())
    return std::numeric_limits<double>::infinity();
  double worst = 0;
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const auto q = work.view<Real, Dim>();
    fn::CopyAndMeasure<Real, Dim> f{
        {p, static_cast<const Real*>(m.ref), PeriodicImage<Real>::make(box)}, unwrap, {}};
    for (int d = 0; d < Dim; ++d) f.out[d] = q.x[d];
    worst = max_over_index(s.backend(), m.n, f);
  });
  return worst;
}

void pack_positions(const ParticleStore& from, IndexList& idx, const double* shift, void* out) {
  const Backend b = from.backend();
  const std::size_t c = idx.size();
  if (c == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    fn::GatherPositions<Real, Dim> f{p, idx.device(b), c, {}, static_cast<Real*>(out)};
    for (int d = 0; d < Dim; ++d) f.shift[d] = Real(shift[d]);
    for_each_index(b, c, f);
  });
}

void unpack_positions(ParticleStore& to, std::size_t offset, std::size_t count, const void* in) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    const Real* src = static_cast<const Real*>(in);
    for (int d = 0; d < Dim; ++d)
      to.memory().copy(p.x[d] + offset, src + std::size_t(d) * count, count * sizeof(Real));
  });
}

void pack_static(const ParticleStore& from, IndexList& idx, void* out) {
  const std::size_t c = idx.size();
  if (c == 0) return;
  visit(from, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    char* o = static_cast<char*>(out);
    for_each_index(
        from.backend(), c,
        fn::GatherStatic<Real, Dim>{p, idx.device(from.backend()), reinterpret_cast<Real*>(o),
                                    reinterpret_cast<std::int32_t*>(o + c * sizeof(Real))});
  });
}

void unpack_static(ParticleStore& to, std::size_t offset, std::size_t count, const void* in) {
  if (count == 0) return;
  visit(to, [&](auto p) {
    using Real = typename decltype(p)::real;
    const char* i = static_cast<const char*>(in);
    to.memory().copy(p.mass + offset, i, count * sizeof(Real));
    to.memory().copy(p.type + offset, i + count * sizeof(Real), count * sizeof(std::int32_t));
    for_each_index(to.backend(), count, fn::ClearIds{p.id + offset});
  });
}

void pack_sources(const ParticleStore& s, void* pos, std::int32_t* type) {
  const Backend b = s.backend();
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    constexpr int Dim = decltype(p)::dim;
    for_each_index(b, p.n, fn::PackSources<Real, Dim>{p, static_cast<Real*>(pos), type});
  });
}

}  // namespace pardyn::parallel
