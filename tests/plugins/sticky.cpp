// SPDX-License-Identifier: BSD-3-Clause
// An out-of-tree long-range law with a short-range part (the tree and far-zone tests).
#include "test_sticky.hpp"

#include "pardyn/pair_potential.hpp"
#include "pardyn/plugin_export.hpp"

PARDYN_PAIR_POTENTIAL_PLUGIN(TestSticky)
