// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "pardyn/particles.hpp"

namespace pardyn {

void HostParticles::resize(std::size_t n) {
  for (int d = 0; d < 3; ++d) {
    x[d].resize(d < dim ? n : 0);
    v[d].resize(d < dim ? n : 0);
    a[d].resize(d < dim ? n : 0);
    image[d].resize(d < dim ? n : 0);
  }
  mass.resize(n);
  type.resize(n);
  id.resize(n);
  epot.resize(n);
  virial.resize(n);
}

void HostParticles::append(const HostParticles& o) {
  if (o.dim != dim) throw Error("internal: appending particles of another dimension");
  const std::size_t n0 = size();
  resize(n0 + o.size());
  assign_at(n0, o);
}

void HostParticles::assign_at(std::size_t at, const HostParticles& o) {
  if (o.dim != dim) throw Error("internal: copying particles of another dimension");
  const std::size_t n1 = o.size();
  if (at + n1 > size()) throw Error("internal: copying particles beyond the end of the set");
  auto copy = [&](auto& dst, const auto& src) {
    if (src.size() == n1) std::copy(src.begin(), src.end(), dst.begin() + std::ptrdiff_t(at));
  };
  for (int d = 0; d < dim; ++d) {
    copy(x[d], o.x[d]);
    copy(v[d], o.v[d]);
    copy(a[d], o.a[d]);
    copy(image[d], o.image[d]);
  }
  copy(mass, o.mass);
  copy(type, o.type);
  copy(id, o.id);
  copy(epot, o.epot);
  copy(virial, o.virial);
}

namespace {
class HostMemory final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p)
      throw Error("out of host memory allocating " + std::to_string(bytes) +
                  " bytes for particles");
    return p;
  }
  void deallocate(void* p) override { std::free(p); }
  void copy_to_host(void* dst, const void* src, std::size_t b) override {
    if (b) std::memcpy(dst, src, b);
  }
  void copy_from_host(void* dst, const void* src, std::size_t b) override {
    if (b) std::memcpy(dst, src, b);
  }
  void copy(void* dst, const void* src, std::size_t b) override {
    if (b) std::memmove(dst, src, b);
  }
  void fill_zero(void* p, std::size_t b) override {
    if (b) std::memset(p, 0, b);
  }
  Backend backend() const override { return Backend::Cpu; }
};
}  // namespace

MemoryResource& host_memory() {
  static HostMemory m;
  return m;
}

ParticleStore::ParticleStore(int dim, Precision precision, MemoryResource& memory)
    : dim_(dim), precision_(precision), memory_(&memory) {
  if (dim != 2 && dim != 3) throw Error("dimension must be 2 or 3, not " + std::to_string(dim));
}

ParticleStore::~ParticleStore() {
  for (auto& a : arrays_)
    if (a.ptr) memory_->deallocate(a.ptr);
  for (auto& l : labels_)
    if (l.ptr) memory_->deallocate(l.ptr);
}

std::int32_t* ParticleStore::label(const std::string& name) {
  for (auto& l : labels_)
    if (l.name == name) {
      if (l.size < n_) {
        memory_->deallocate(l.ptr);
        l.ptr = static_cast<std::int32_t*>(memory_->allocate(std::max<std::size_t>(n_, 1) * 4));
        memory_->fill_zero(l.ptr, n_ * 4);
        l.size = n_;
      }
      return l.ptr;
    }
  Label l;
  l.name = name;
  l.ptr = static_cast<std::int32_t*>(memory_->allocate(std::max<std::size_t>(n_, 1) * 4));
  memory_->fill_zero(l.ptr, n_ * 4);
  l.size = n_;
  labels_.push_back(l);
  return l.ptr;
}

std::vector<std::string> ParticleStore::label_names() const {
  std::vector<std::string> names;
  for (const auto& l : labels_) names.push_back(l.name);
  return names;
}

std::size_t ParticleStore::elem_size(int slot) const {
  if (slot == TYPE || slot >= I0) return sizeof(std::int32_t);
  if (slot == ID) return sizeof(std::int64_t);
  return precision_ == Precision::Float ? sizeof(float) : sizeof(double);
}

bool ParticleStore::slot_used(int slot) const {
  if (dim_ == 2 && (slot == X2 || slot == V2 || slot == A2 || slot == I2)) return false;
  return true;
}

std::size_t ParticleStore::bytes_per_particle() const {
  std::size_t b = 0;
  for (int s = 0; s < NSLOT; ++s)
    if (slot_used(s)) b += elem_size(s);
  return b;
}

void ParticleStore::resize(std::size_t n) {
  ++generation_;
  if (n <= capacity_) {
    n_ = n;
    return;
  }
  // The first allocation is exact; a store that grows again (particles arriving from other ranks,
  // ghosts) gets room to spare, so that a few more particles do not reallocate every array.
  reallocate(capacity_ == 0 ? n : std::max(n, capacity_ + capacity_ / 8 + 64));
  n_ = n;
}

void ParticleStore::reserve(std::size_t n) {
  // The same particles in the same order (the generation stays): only the room grows, to n exactly.
  if (n > capacity_) reallocate(n);
}

void ParticleStore::reallocate(std::size_t cap) {
  for (int s = 0; s < NSLOT; ++s) {
    if (!slot_used(s)) continue;
    void* fresh = memory_->allocate(cap * elem_size(s));
    memory_->fill_zero(fresh, cap * elem_size(s));
    if (arrays_[s].ptr) {
      memory_->copy(fresh, arrays_[s].ptr, n_ * elem_size(s));
      memory_->deallocate(arrays_[s].ptr);
    }
    arrays_[s].ptr = fresh;
    arrays_[s].elem = elem_size(s);
  }
  capacity_ = cap;
}

void ParticleStore::swap_accelerations(ParticleStore& other) {
  if (other.dim_ != dim_ || other.precision_ != precision_ || &other.memory() != memory_ ||
      other.capacity_ != capacity_)
    throw Error("internal: swap_accelerations between unlike stores");
  for (int s = A0; s <= A2; ++s)
    if (slot_used(s)) std::swap(arrays_[s].ptr, other.arrays_[s].ptr);
}

namespace {
// Converts a double host array into the store's precision and copies it to the backend's memory.
void put(MemoryResource& m, void* dst, const std::vector<double>& src, Precision p, std::size_t n) {
  if (src.size() < n) throw Error("internal: host array shorter than the particle count");
  if (p == Precision::Double) {
    m.copy_from_host(dst, src.data(), n * sizeof(double));
  } else {
    std::vector<float> tmp(src.begin(), src.begin() + n);
    m.copy_from_host(dst, tmp.data(), n * sizeof(float));
  }
}
void get(MemoryResource& m, std::vector<double>& dst, const void* src, Precision p, std::size_t n) {
  dst.resize(n);
  if (p == Precision::Double) {
    m.copy_to_host(dst.data(), src, n * sizeof(double));
  } else {
    std::vector<float> tmp(n);
    m.copy_to_host(tmp.data(), src, n * sizeof(float));
    std::copy(tmp.begin(), tmp.end(), dst.begin());
  }
}
}  // namespace

void ParticleStore::upload(const HostParticles& hp) {
  if (hp.dim != dim_)
    throw Error("internal: uploading " + std::to_string(hp.dim) + "D particles into a " +
                std::to_string(dim_) + "D store");
  const std::size_t n = hp.size();
  resize(n);
  ++generation_;
  for (int d = 0; d < dim_; ++d) {
    put(*memory_, raw(X0 + d), hp.x[d], precision_, n);
    put(*memory_, raw(V0 + d), hp.v[d], precision_, n);
    // Accelerations when given (a resumed run's checkpoint), else zero.
    if (hp.a[d].size() == n) put(*memory_, raw(A0 + d), hp.a[d], precision_, n);
    else memory_->fill_zero(raw(A0 + d), n * elem_size(A0));
    // Image counts when given (a checkpoint), else zero: the particles start unwrapped.
    if (hp.image[d].size() == n)
      memory_->copy_from_host(raw(I0 + d), hp.image[d].data(), n * sizeof(std::int32_t));
    else memory_->fill_zero(raw(I0 + d), n * sizeof(std::int32_t));
  }
  put(*memory_, raw(MASS), hp.mass, precision_, n);
  memory_->copy_from_host(raw(TYPE), hp.type.data(), n * sizeof(std::int32_t));
  memory_->copy_from_host(raw(ID), hp.id.data(), n * sizeof(std::int64_t));
  memory_->fill_zero(raw(EPOT), n * elem_size(EPOT));
  memory_->fill_zero(raw(VIRIAL), n * elem_size(VIRIAL));
  for (const auto& [name, values] : hp.labels)
    if (values.size() == n)
      memory_->copy_from_host(label(name), values.data(), n * sizeof(std::int32_t));
}

void ParticleStore::download(HostParticles& hp, unsigned fields) const {
  hp.dim = dim_;
  const std::size_t n = n_;
  for (int d = 0; d < 3; ++d) {
    if (d >= dim_) {
      hp.x[d].clear(), hp.v[d].clear(), hp.a[d].clear(), hp.image[d].clear();
      continue;
    }
    if (fields & kImage) {
      hp.image[d].resize(n);
      memory_->copy_to_host(hp.image[d].data(), raw(I0 + d), n * sizeof(std::int32_t));
    }
    if (fields & kPosition) get(*memory_, hp.x[d], raw(X0 + d), precision_, n);
    if (fields & kVelocity) get(*memory_, hp.v[d], raw(V0 + d), precision_, n);
    if (fields & kAcceleration) get(*memory_, hp.a[d], raw(A0 + d), precision_, n);
  }
  // Masses are always copied: size() of a HostParticles is the length of its mass array.
  get(*memory_, hp.mass, raw(MASS), precision_, n);
  if (fields & kType) {
    hp.type.resize(n);
    memory_->copy_to_host(hp.type.data(), raw(TYPE), n * sizeof(std::int32_t));
  }
  if (fields & kId) {
    hp.id.resize(n);
    memory_->copy_to_host(hp.id.data(), raw(ID), n * sizeof(std::int64_t));
  }
  if (fields & kEpot) get(*memory_, hp.epot, raw(EPOT), precision_, n);
  if (fields & kVirial) get(*memory_, hp.virial, raw(VIRIAL), precision_, n);
  hp.labels.clear();
  if (fields & kLabels)
    for (const auto& l : labels_) {
      if (l.size < n) continue;
      std::vector<std::int32_t> values(n);
      memory_->copy_to_host(values.data(), l.ptr, n * sizeof(std::int32_t));
      hp.labels.emplace_back(l.name, std::move(values));
    }
}

}  // namespace pardyn
