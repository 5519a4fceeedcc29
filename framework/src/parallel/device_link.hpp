// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: device-to-device messages between two ranks on one node through CUDA IPC.
// The sender's message buffer is mapped into the receiver's address space (once, and again when it
// grows), and the receiver copies from it over NVLink or PCIe with the copy engines: no host memory,
// no MPI library that must understand device pointers. Small MPI messages carry each message's size
// (and a new buffer handle when there is one). A sender refills its buffer only after the next
// global decision of Domain::prepare (an allreduce every rank reaches with its device work done),
// so the receiver's copies out of it are over by then: no acknowledgement travels.
#pragma once

#include <cstddef>
#include <memory>

#include "communicator.hpp"

namespace pardyn::parallel {

class DeviceLink {
 public:
  // One direction, this rank -> peer (send side) or peer -> this rank (receive side), with its tag.
  DeviceLink(Communicator& comm, int peer, int tag);
  ~DeviceLink();
  DeviceLink(const DeviceLink&) = delete;
  DeviceLink& operator=(const DeviceLink&) = delete;

  // Whether two ranks can use links at all: both on this node, CUDA peer access between their
  // devices, and not switched off (PARDYN_DEVICE_LINKS=0). Collective over the two ranks? No:
  // decided from what every rank knows (the same answer on both sides).
  static bool usable(Communicator& comm, int peer);

  // --- send side ---
  // A device buffer of at least `bytes` to fill (the peer has read the last message: see above).
  char* buffer(std::size_t bytes);
  // The buffer holds `bytes` (the default stream has written it: this synchronises it) -> peer.
  void post(std::size_t bytes);

  // --- receive side ---
  // Waits for the next message: its size, and its bytes in the sender's buffer (device memory of
  // the peer, readable from this device). Copy from it on the default stream, then call done().
  const char* receive(std::size_t& bytes);
  void done();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pardyn::parallel
