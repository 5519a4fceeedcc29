// SPDX-License-Identifier: BSD-3-Clause
// The union-find of plugins, written once: a parent array over [0, n) (parent[k] == k at the start)
// whose unions hook the larger of two roots under the smaller with a compare-and-swap (as ECL-CC,
// Jaiganesh & Burtscher 2018), so that a parent only ever decreases and every set's root ends as
// its smallest index, whatever the order of the unions. The same functions serve the functors that
// the framework's loops run concurrently (OpenMP threads or a GPU kernel: clusters_kernels.hpp)
// and a plain loop on one host thread (the join of the clusters of all ranks, clusters_parallel.cpp).
//   find_root(parent, x)   the root of x, halving the path on the way
//   unite(parent, a, b)    joins the sets of a and b
//   root_of(parent, x)     the root of x without writing (for flattening concurrently: a halving
//                          write could put an ancestor back over the root another thread has just
//                          written)
//   flatten(parent, n)     every parent[k] made its root, on this thread
#pragma once

#include <cstddef>
#include <cstdint>

#include "atomic.hpp"
#include "pardyn/core.hpp"

namespace pardyn::plugins {

// The root of x, halving the path on the way (a benign race: parents only move towards roots).
PARDYN_HD PARDYN_INLINE std::uint32_t find_root(std::uint32_t* parent, std::uint32_t x) {
  std::uint32_t p = atomic::load(parent + x);
  while (p != x) {
    const std::uint32_t gp = atomic::load(parent + p);
    if (gp != p) atomic::store(parent + x, gp);
    x = p;
    p = gp;
  }
  return x;
}

// Joins the components of slots a and b: the larger root is hooked under the smaller, if it is
// still a root (else the roots are looked up again).
PARDYN_HD PARDYN_INLINE void unite(std::uint32_t* parent, std::uint32_t a, std::uint32_t b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  while (a != b) {
    if (a < b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomic::cas(parent + a, a, b);
    if (old == a) return;
    a = find_root(parent, old);
    b = find_root(parent, b);
  }
}

// The root of x, read without writing: every parent read is an ancestor of x, so this is safe while
// other threads set their own slots to their roots.
PARDYN_HD PARDYN_INLINE std::uint32_t root_of(const std::uint32_t* parent, std::uint32_t x) {
  for (std::uint32_t p = atomic::load(parent + x); p != x; p = atomic::load(parent + x)) x = p;
  return x;
}

// Every parent[k], k < n, made its root (one host thread).
inline void flatten(std::uint32_t* parent, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) parent[k] = root_of(parent, std::uint32_t(k));
}

}  // namespace pardyn::plugins
