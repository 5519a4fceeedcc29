// SPDX-License-Identifier: BSD-3-Clause
// The communicator as plugins see it: the ranks of a parallel (MPI) run and the collective operations
// a plugin may call (sums, maxima, gather, all-to-all). A serial run has none (RunInfo::comm is
// null). Device-clean headers that carry a Comm* only forward-declare it.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/comm.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pardyn {

// The ranks of a parallel (MPI) run, as plugins see them: collective operations that every rank must
// call together, in the same order. A serial run has no communicator (RunInfo::comm is null).
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place, over all ranks: element-wise sums and maxima.
  virtual void sum(double* values, std::size_t n) = 0;
  virtual void max(double* values, std::size_t n) = 0;
  // In place, over all ranks: element-wise sums of 64-bit integers (exact; ExactSum's reduction).
  virtual void sum(std::int64_t* values, std::size_t n) = 0;
  // Rank 0 gets every rank's bytes, in rank order (its own first); the other ranks get nothing.
  virtual std::vector<std::vector<char>> gather(const std::vector<char>& mine) = 0;
  // Every rank sends send[r] to rank r (send has size() entries, any of them empty) and gets, in
  // rank order, the bytes each rank sent it (its own send[rank()] among them, moved, not copied).
  // Pass the messages with std::move: they are freed once sent.
  virtual std::vector<std::vector<char>> alltoallv(std::vector<std::vector<char>> send) = 0;
  virtual void barrier() = 0;
};

}  // namespace pardyn
