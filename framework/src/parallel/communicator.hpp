// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the communicator of a parallel run. The SDK's Comm (plugin.hpp) is what
// plugins may use; the framework's parallel engines (the all-pairs ring, the domain decomposition)
// need point-to-point messages as well. Implemented over MPI (communicator_mpi.cpp) when pardyn is
// built with MPI; a serial run has no communicator at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/comm.hpp"
#include "pardyn/core.hpp"

namespace pardyn::parallel {

class Communicator : public Comm {
 public:
  // A pending non-blocking transfer.
  class Request {
   public:
    virtual ~Request() = default;
    virtual void wait() = 0;
  };
  // Non-blocking byte transfers (any size: large ones go as several messages under one tag).
  virtual std::unique_ptr<Request> isend(const void* data, std::size_t bytes, int dest,
                                         int tag) = 0;
  virtual std::unique_ptr<Request> irecv(void* data, std::size_t bytes, int source, int tag) = 0;
  // Blocking exchange: sends `bytes` to dest while receiving from source.
  void sendrecv(const void* send, std::size_t send_bytes, int dest, void* recv,
                std::size_t recv_bytes, int source, int tag) {
    auto r = irecv(recv, recv_bytes, source, tag);
    auto s = isend(send, send_bytes, dest, tag);
    r->wait();
    s->wait();
  }
  // Every rank's `bytes` bytes, in rank order, on every rank.
  virtual void allgather(const void* mine, std::size_t bytes, void* all) = 0;
  // Ends every rank now (an error on this rank that the others cannot know about): never returns.
  [[noreturn]] virtual void abort(int code) = 0;
  // Whether the MPI library passes device pointers itself (CUDA-aware).
  virtual bool device_aware() const { return false; }
  // Ranks on this node and this rank's index among them (GPU choice).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // Whether `rank` runs on this node (shared memory, the same GPUs).
  virtual bool same_node(int rank) const = 0;
};

// The MPI runtime: started when this process was launched by mpirun (or srun) as one of several,
// ended at exit. Null in every other case, and always when pardyn was built without MPI (a launch
// by mpirun with more than one process is then refused with an explanation).
Communicator* world();
// Starts MPI if the environment says this process is one rank of a parallel launch.
void init(int* argc, char*** argv);
void finalize();
bool built_with_mpi();

// Runs `phase` on every rank and agrees on the outcome: if it threw a pardyn::Error on any rank,
// every rank throws. The lowest failing rank's message is the one reported (by rank 0, with
// "rank K:" in front); the other ranks throw a QuietError that main() does not print.
struct QuietError : Error {
  QuietError() : Error("") {}
};
// What agree_status throws on rank 0: an error every rank already knows of (the others throw
// QuietError). An agree() around it passes it on without another round, so that phases may nest.
struct AgreedError : Error {
  using Error::Error;
};
template <class F>
void agree(Communicator* comm, F&& phase);
void agree_status(Communicator* comm, const std::string& error);  // "" = fine
// Checks that `value` is the same on every rank; if not, every rank throws (rank 0 names the first
// rank that differs, what differs and `advice`).
void check_same(Communicator* comm, const std::string& what, const std::string& value,
                const std::string& advice);

template <class F>
void agree(Communicator* comm, F&& phase) {
  if (!comm) {
    phase();
    return;
  }
  std::string err;
  try {
    phase();
  } catch (const QuietError&) {
    throw;
  } catch (const AgreedError&) {
    throw;
  } catch (const Error& e) {
    err = e.what();
    if (err.empty()) err = "unknown error";
  }
  agree_status(comm, err);
}

}  // namespace pardyn::parallel
