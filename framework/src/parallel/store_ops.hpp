// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the operations on a particle store that the parallel engines need (moving
// particles between ranks, ghost positions, source blocks), once for the host and once for the GPU
// (store_ops_cuda.cu). Index lists and codes travel through host memory; the per-particle work runs
// where the store lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::parallel {

// A list of store indices, kept on the host and (for a device store) mirrored in device memory.
class IndexList {
 public:
  IndexList();
  ~IndexList();
  IndexList(IndexList&&) noexcept;
  IndexList& operator=(IndexList&&) noexcept;
  std::vector<std::uint32_t> host;
  std::size_t size() const { return device_only_ ? count_ : host.size(); }
  // The device copy of `host` (uploaded on first use after a change; call changed() after edits).
  const std::uint32_t* device(Backend b);
  void changed() {
    dirty_ = true;
    device_only_ = false;
  }
  // A selection writes the list where the store lives (select_index): room for n in backend b's
  // memory, then the count found. After a selection on the device, `host` is empty until fetch()
  // copies the list down.
  std::uint32_t* buffer(Backend b, std::size_t n);
  void set_count(std::size_t n);
  void fetch();

 private:
  struct Dev;
  std::unique_ptr<Dev> dev_;
  bool dirty_ = true;
  bool device_only_ = false;
  std::size_t count_ = 0;
  Backend filled_on_ = Backend::Cpu;
};

// Bytes of one particle's migration record: x, v (dim each) and mass in the store's precision, type
// and id.
std::size_t record_bytes(const ParticleStore& s);
// Appends the records of particles idx to out (host bytes).
void gather_records(const ParticleStore& s, IndexList& idx, std::vector<char>& out);
// Appends `count` records to the end of the store (accelerations, energies and virials zero).
void append_records(ParticleStore& s, const char* records, std::size_t count);
// Removes the particles idx (sorted ascending) from the store: the last particles fill the holes.
void remove_particles(ParticleStore& s, const std::vector<std::uint32_t>& idx);

// A slab along one axis: u = x[axis] - centre (minimum image when period > 0) against [lo, hi).
struct Slab {
  int axis = 0;
  double centre = 0, lo = 0, hi = 0, period = 0;
};
// The particles [begin, end) of s whose u (see Slab) is below slab.lo go to `lo`, those at or above
// slab.hi to `hi`, in index order (on the device for a device store).
void select_slab(const ParticleStore& s, std::size_t begin, std::size_t end, const Slab& slab,
                 IndexList& lo, IndexList& hi);

// Ghost positions: the positions of particles idx of `from`, shifted, as dim arrays of count values
// one after the other (host bytes, the store's precision).
void gather_positions(const ParticleStore& from, IndexList& idx, const double* shift,
                      std::vector<char>& out);
// The reverse: writes such arrays into `to` at [offset, offset + count).
void put_positions(ParticleStore& to, std::size_t offset, std::size_t count, const char* data);
// Masses and types of `from`'s particles idx into `to` at offset (host bytes in between).
void gather_static(const ParticleStore& from, IndexList& idx, std::vector<char>& out);
void put_static(ParticleStore& to, std::size_t offset, std::size_t count, const char* data);
std::size_t static_bytes(const ParticleStore& s);  // per particle: mass (Real) and type

// Periodic images towards a point: along axes with period > 0, x becomes the image of x nearest
// centre (the other axes are copied as they are).
struct Unwrap {
  double centre[3] = {0, 0, 0};
  double period[3] = {0, 0, 0};
};
// to[0, n) positions (and with `all`, masses, types and ids) = from's, positions unwrapped.
void copy_prefix(const ParticleStore& from, ParticleStore& to, std::size_t n, bool all,
                 const Unwrap& unwrap);
// to's accelerations (and with energy, epot and virial) [0, n) += from's (with `assign`: = from's).
void add_forces(const ParticleStore& from, ParticleStore& to, std::size_t n, bool energy,
                bool assign = false);

// Largest squared displacement (minimum image on periodic axes) of the store's particles from
// `ref` (positions as dim arrays, backend memory, the store's precision); `save` copies the positions
// into ref instead (resizing it). Infinity when a position is not finite.
class Reference {
 public:
  Reference();
  ~Reference();
  void save(const ParticleStore& s);
  double max_displacement2(const ParticleStore& s, const Box& box) const;
  // The same, while copying the positions into `work` (unwrapped), in one pass.
  double copy_and_measure(const ParticleStore& s, ParticleStore& work, const Unwrap& unwrap,
                          const Box& box) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A message buffer in the backend's memory and, for a device store, a pinned host mirror (for MPI
// libraries that cannot read device memory). Copies between the two are asynchronous on the
// default stream (ordered with the kernels; on the side stream under a gpu::SideWork); sync()
// waits for them.
class Stage {
 public:
  Stage();
  ~Stage();
  Stage(Stage&&) noexcept;
  Stage& operator=(Stage&&) noexcept;
  char* device(Backend b, std::size_t bytes);
  char* host(Backend b, std::size_t bytes);
  void to_host(Backend b, std::size_t bytes);
  void to_device(Backend b, std::size_t bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
void sync(Backend b);
// Positions of from's particles idx, shifted, as dim arrays of count values into `out` (backend
// memory); and the reverse into `to` at [offset, offset + count).
void pack_positions(const ParticleStore& from, IndexList& idx, const double* shift, void* out);
void unpack_positions(ParticleStore& to, std::size_t offset, std::size_t count, const void* in);
// Masses then types of from's particles idx into `out` (backend memory: count reals, then count
// int32); and the reverse into `to` at [offset, offset + count), whose ids become -1 (ghosts).
void pack_static(const ParticleStore& from, IndexList& idx, void* out);
void unpack_static(ParticleStore& to, std::size_t offset, std::size_t count, const void* in);

// Source records {x, y, z, m} / {x, y, m, 0} and types of every particle of the store, for the
// all-pairs ring, into backend memory at pos and type (pos: n * 4 reals).
void pack_sources(const ParticleStore& s, void* pos, std::int32_t* type);

// Bytes a store's loop writes for the host, or reads from it (buffers.cpp): a CPU store's loop uses
// the host bytes themselves; a GPU store's, a device scratch area copied to or from them through
// the store's memory. The one place where the gathers and the append meet the memory spaces; their
// loops are the same functors on both backends.
class Staged {
 public:
  Staged(const ParticleStore& s, char* host, std::size_t bytes);
  char* data() const { return data_; }
  void to_device() const;
  void to_host() const;

 private:
  const ParticleStore& s_;
  char* host_;
  std::size_t bytes_;
  char* data_;
};

namespace gpu {
// Memory of the device for the buffers above: store_ops_cuda.cu, or store_ops_stub.cpp in a build
// without CUDA (where no store lives on a device and each of them reports an internal error). The
// loops themselves are functors (store_functors.hpp) run by for_each_index, max_over_index and
// select_index.
// A device scratch area of at least `bytes`, reused from call to call (valid until the next call).
void* stage(std::size_t bytes);
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p);
void* device_alloc(std::size_t bytes);
void copy_async(void* dst, const void* src, std::size_t bytes);
void sync();
// A copy on a stream of its own (beside the default stream's kernels: transfers that overlap a
// force walk), and the wait for it.
void copy_side(void* dst, const void* src, std::size_t bytes);
void sync_side();
// While one lives, this thread's loops (for_each_index, exclusive_sum, the tree builder), Stage
// copies and sync() go to the side stream, which first waits for the default stream's work given
// so far; the default stream's kernels given after (a force walk) run beside them; when it ends,
// the default stream's later work waits for the side stream's. Nothing on a CPU backend (or
// nested).
class SideWork {
 public:
  explicit SideWork(Backend b);
  ~SideWork();
  SideWork(const SideWork&) = delete;
  SideWork& operator=(const SideWork&) = delete;
  // Runs f with this thread's work on the default stream (a walk to run beside the side work).
  template <class F>
  void on_default(F&& f) {
    set(false);
    f();
    set(true);
  }

 private:
  void set(bool side);
  bool on_;
};
void download(void* dst, const void* src, std::size_t bytes);
std::uint32_t* upload_index(std::uint32_t* dev, std::size_t& capacity,
                            const std::vector<std::uint32_t>& host);
void free_device(void* p);
}  // namespace gpu

}  // namespace pardyn::parallel
