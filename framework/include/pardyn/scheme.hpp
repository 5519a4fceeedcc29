// SPDX-License-Identifier: BSD-3-Clause
// The Scheme plugin kind: a spatial scheme, which builds and keeps up to date the neighbourhood
// structure (neighbourhood.hpp) that potentials traverse.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/scheme.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include "pardyn/box.hpp"
#include "pardyn/neighbourhood.hpp"
#include "pardyn/particles.hpp"

namespace pardyn {

// A spatial scheme: builds (and keeps up to date) the neighbourhood structure of one kind.
class Scheme {
 public:
  virtual ~Scheme() = default;
  virtual void update(ParticleStore& s, const Box& box, const Reach& reach) = 0;
  virtual Neighbourhood neighbourhood() const = 0;
  // Checkpoints: whether update() may reuse what an earlier call built (a Verlet list, rebuilt only
  // once particles have moved far enough), and whether the last call built anew. The framework
  // keeps the positions of the last build, so that a resumed run rebuilds the very structure the
  // run it continues was using and both go on identically. Schemes that build at every update
  // keep the defaults.
  virtual bool reuses_structure() const { return false; }
  virtual bool rebuilt() const { return true; }
};

}  // namespace pardyn
