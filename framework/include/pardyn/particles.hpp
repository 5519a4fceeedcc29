// SPDX-License-Identifier: BSD-3-Clause
// Particle storage: a structure of arrays in the run's precision and dimension, resident in the
// backend's memory (host RAM for the CPU backend, device memory for CUDA). Kernels see it through a
// ParticleView: a trivially-copyable bundle of pointers that can be passed to a CUDA kernel by value.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/particles.hpp is host-only (device code: pardyn/particle_view.hpp)"
#endif

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pardyn/core.hpp"
#include "pardyn/particle_view.hpp"

namespace pardyn {

// The particles as plain double arrays on the host: what generators produce and observers receive.
struct HostParticles {
  int dim = 3;
  std::vector<double> x[3], v[3], a[3];
  std::vector<double> mass;
  std::vector<std::int32_t> type;
  std::vector<std::int64_t> id;
  std::vector<double> epot, virial;
  std::vector<std::int32_t> image[3];  // periodic image counts (see ParticleView::image)
  // Per-particle integer labels computed by analyses (e.g. "cluster"), written to every frame.
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> labels;

  explicit HostParticles(int d = 3) : dim(d) {}
  std::size_t size() const { return mass.size(); }
  void resize(std::size_t n);
  // Appends another set (same dimension); ids are renumbered by the store, not here.
  void append(const HostParticles& o);
  // Copies o's particles (same dimension) to [at, at + o.size()), which must exist: every array
  // o holds for all of its particles (labels aside).
  void assign_at(std::size_t at, const HostParticles& o);
};

// Memory of one backend. The CPU backend uses 64-byte aligned host memory; the CUDA backend supplies
// device allocations. Copies to and from the host go through it so the store needs no CUDA code.
class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void fill_zero(void* p, std::size_t bytes) = 0;
  virtual Backend backend() const = 0;
};

MemoryResource& host_memory();

class ParticleStore {
 public:
  ParticleStore(int dim, Precision precision, MemoryResource& memory);
  ~ParticleStore();
  ParticleStore(const ParticleStore&) = delete;
  ParticleStore& operator=(const ParticleStore&) = delete;

  int dim() const { return dim_; }
  Precision precision() const { return precision_; }
  Backend backend() const { return memory_->backend(); }
  std::size_t size() const { return n_; }
  std::size_t bytes_per_particle() const;

  // Changes the number of particles, keeping the first min(old, new) of them.
  void resize(std::size_t n);
  // Room for n particles without changing the count (the arrays are reallocated if needed).
  void reserve(std::size_t n);
  std::size_t capacity() const { return capacity_; }
  // Exchanges the acceleration arrays with those of `other` (same dimension, precision, backend
  // and capacity): a parallel run hands the forces computed on its work store to the particle store
  // this way instead of copying them.
  void swap_accelerations(ParticleStore& other);

  // Replaces the contents with hp (positions, velocities, masses, types, ids, and the labels it
  // holds). Accelerations are hp's when it has them (a checkpoint), else zero; energies and virials
  // are set to zero.
  void upload(const HostParticles& hp);

  enum Field : unsigned {
    kPosition = 1,
    kVelocity = 2,
    kAcceleration = 4,
    kMass = 8,
    kType = 16,
    kId = 32,
    kEpot = 64,
    kVirial = 128,
    kLabels = 256,
    kImage = 512,
    kAll = 1023
  };
  // Copies the requested fields to hp (converted to double), resizing it.
  void download(HostParticles& hp, unsigned fields = kAll) const;

  template <typename Real, int Dim>
  ParticleView<Real, Dim> view() const;

  MemoryResource& memory() const { return *memory_; }

  // Changes whenever the set or order of particles may have changed (resize, upload, touch): a
  // structure built over the store (a sorted cell list) must be rebuilt when it differs.
  std::uint64_t generation() const { return generation_; }
  void touch() { ++generation_; }

  // Particles [0, targets()) receive forces; the rest are sources only (the ghosts of a parallel
  // run's domain decomposition: their forces are another rank's business, and structures may skip
  // them as targets). Default: all.
  std::size_t targets() const { return targets_ < n_ ? targets_ : n_; }
  void set_targets(std::size_t n) { targets_ = n; }

  // A named per-particle int32 array in the backend's memory (cluster ids, ...), created zeroed on
  // first use; downloaded with kLabels. Its contents are undefined after resize().
  std::int32_t* label(const std::string& name);
  std::vector<std::string> label_names() const;

 private:
  struct Label {
    std::string name;
    std::int32_t* ptr = nullptr;
    std::size_t size = 0;
  };
  std::vector<Label> labels_;

  struct Array {
    void* ptr = nullptr;
    std::size_t elem = 0;
  };
  enum Slot { X0, X1, X2, V0, V1, V2, A0, A1, A2, MASS, TYPE, ID, EPOT, VIRIAL, I0, I1, I2, NSLOT };
  std::size_t elem_size(int slot) const;
  void reallocate(std::size_t capacity);  // every array to `capacity`, keeping the first n_
  bool slot_used(int slot) const;
  void* raw(int slot) const { return arrays_[slot].ptr; }

  int dim_;
  Precision precision_;
  MemoryResource* memory_;
  std::size_t n_ = 0;
  std::size_t capacity_ = 0;
  std::uint64_t generation_ = 0;
  std::size_t targets_ = ~std::size_t(0);
  std::array<Array, NSLOT> arrays_{};
};

template <typename Real, int Dim>
ParticleView<Real, Dim> ParticleStore::view() const {
  constexpr Precision want = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
  if (Dim != dim_ || want != precision_)
    throw Error("internal: particle view requested as " + std::to_string(Dim) + "D " +
                to_string(want) + " for a " + std::to_string(dim_) + "D " + to_string(precision_) +
                " store");
  ParticleView<Real, Dim> p;
  p.n = n_;
  for (int d = 0; d < Dim; ++d) {
    p.x[d] = static_cast<Real*>(raw(X0 + d));
    p.v[d] = static_cast<Real*>(raw(V0 + d));
    p.a[d] = static_cast<Real*>(raw(A0 + d));
    p.image[d] = static_cast<std::int32_t*>(raw(I0 + d));
  }
  p.mass = static_cast<Real*>(raw(MASS));
  p.type = static_cast<std::int32_t*>(raw(TYPE));
  p.id = static_cast<std::int64_t*>(raw(ID));
  p.epot = static_cast<Real*>(raw(EPOT));
  p.virial = static_cast<Real*>(raw(VIRIAL));
  return p;
}

// Calls f(view) with the view type matching the store's dimension and precision: the one place where
// the run-time choice becomes a compile-time type.
template <typename F>
decltype(auto) visit(const ParticleStore& s, F&& f) {
  if (s.dim() == 2) {
    if (s.precision() == Precision::Float) return f(s.view<float, 2>());
    return f(s.view<double, 2>());
  }
  if (s.precision() == Precision::Float) return f(s.view<float, 3>());
  return f(s.view<double, 3>());
}

}  // namespace pardyn
