// SPDX-License-Identifier: BSD-3-Clause
// A well-formed out-of-tree plugin: one pair law, a harmonic spring between all pairs closer than
// rcut (a cut-off law: it exercises the traversals' cut-off mask on both backends).
#include "test_spring.hpp"

#include "pardyn/pair_potential.hpp"
#include "pardyn/plugin_export.hpp"

PARDYN_PAIR_POTENTIAL_PLUGIN(TestSpring)
