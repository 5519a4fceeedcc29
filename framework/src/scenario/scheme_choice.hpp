// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the scheme of every [[potential]] given without one, for one rank and for
// many, in one place (docs/real-gas.md "Choosing the scheme", docs/parallel.md), and the notes that
// say what was chosen or what a chosen scheme will cost.
#pragma once

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"

namespace pardyn {

// Fills the scheme of each potential given without one (PotentialSpec::scheme_auto) for a run on
// `ranks` ranks, and adds to sc.notes what was chosen and why, and a note for a chosen scheme that
// will be slow (all_pairs for a cut-off law at large N).
void choose_schemes(Scenario& sc, const Registry& registry, int ranks);

}  // namespace pardyn
