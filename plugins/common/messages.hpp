// SPDX-License-Identifier: BSD-3-Clause
// Messages between the ranks of a parallel run, for plugins (RunInfo::comm): plain values appended
// to bytes and read back in the same order, and an allgather over Comm::alltoallv. Host code;
// header-only, compiled into each plugin that uses it (clusters, msd).
#pragma once

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pardyn/plugin.hpp"

namespace pardyn::plugins {

class Out {
 public:
  template <class T>
  void put(const T* p, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = b_.size();
    b_.resize(at + n * sizeof(T));
    if (n) std::memcpy(b_.data() + at, p, n * sizeof(T));
  }
  template <class T>
  void put(const T& v) {
    put(&v, 1);
  }
  std::vector<char> take() { return std::move(b_); }

 private:
  std::vector<char> b_;
};

class In {
 public:
  // who: the plugin, for the message of a short read.
  In(const std::vector<char>& b, const char* who) : b_(b), who_(who) {}
  template <class T>
  void get(T* p, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (n > (b_.size() - at_) / sizeof(T))
      throw Error(std::string(who_) + ": a message between ranks is shorter than its contents");
    if (n) std::memcpy(p, b_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
  }
  template <class T>
  T get() {
    T v;
    get(&v, 1);
    return v;
  }
  // The values of type T left in the message.
  template <class T>
  std::size_t left() const {
    return (b_.size() - at_) / sizeof(T);
  }
  bool done() const { return at_ >= b_.size(); }

 private:
  const std::vector<char>& b_;
  const char* who_;
  std::size_t at_ = 0;
};

// Every rank's message, on every rank, in rank order (this rank's own moved, not sent).
// Collective.
inline std::vector<std::vector<char>> allgather(Comm& comm, std::vector<char> mine) {
  std::vector<std::vector<char>> send(std::size_t(comm.size()));
  for (int r = 0; r < comm.size(); ++r)
    if (r != comm.rank()) send[std::size_t(r)] = mine;
  auto got = comm.alltoallv(std::move(send));
  got[std::size_t(comm.rank())] = std::move(mine);
  return got;
}

}  // namespace pardyn::plugins
