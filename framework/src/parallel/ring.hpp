// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the all-pairs ring of a parallel run (seed 004). Every rank owns a block of
// particles; the blocks travel once around the ring of ranks, and each rank adds the forces of every
// block that passes on its own particles. Transfers of the next block overlap the kernel on the block
// in hand (GPU: the kernels run asynchronously while the host moves the next block, and its copy to
// the device goes on a second stream). Results stay on the rank that owns the particles.
#pragma once

#include <memory>
#include <vector>

#include "communicator.hpp"
#include "pardyn/potential.hpp"

namespace pardyn::parallel {

class RingBackend;

class Ring {
 public:
  Ring(Communicator& comm, Backend backend);
  ~Ring();
  // Adds `pot`'s forces of all particles of all ranks on this rank's particles (all ranks call it
  // together). With `timed`, the time this rank spent computing (not waiting) is added to
  // compute_seconds().
  void compute(Potential& pot, ParticleStore& s, const ForceRequest& req, bool timed);
  double compute_seconds() const { return seconds_; }
  void reset_timer() { seconds_ = 0; }

 private:
  Communicator& comm_;
  std::unique_ptr<RingBackend> backend_;
  double seconds_ = 0;
};

// The backend half: host buffers for the blocks in transit and, for the GPU, their device copies.
class RingBackend {
 public:
  virtual ~RingBackend() = default;
  // Packs the store's particles as source records + types into a host buffer and returns it.
  virtual const char* pack_local(const ParticleStore& s, std::size_t bytes) = 0;
  // Host buffer `which` (0 or 1) with room for `bytes`, safe to overwrite.
  virtual char* host_buffer(int which, std::size_t bytes) = 0;
  // The block held in host buffer `which` as a SourceBlock the potential can read (GPU: copied to the
  // device asynchronously, ordered before the next kernel).
  virtual SourceBlock make_block(int which, std::size_t n, std::size_t record_bytes) = 0;
  // The kernels reading block `which` have been launched (its buffers may be refilled after them).
  virtual void computed(int /*which*/) {}
  // Timing of compute calls: begin/end around each one; total() after the last (synchronises).
  virtual void begin_compute() = 0;
  virtual void end_compute() = 0;
  virtual double total_seconds() = 0;
};

// The two ring backends (ring.cpp, ring_cuda.cu; without CUDA, cuda_stub.cpp's stand-in says that
// this pardyn has no GPU).
std::unique_ptr<RingBackend> make_cpu_ring_backend();
std::unique_ptr<RingBackend> make_cuda_ring_backend();

}  // namespace pardyn::parallel
