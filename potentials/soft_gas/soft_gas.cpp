// SPDX-License-Identifier: BSD-3-Clause
#include "soft_gas.hpp"

#include "pardyn/pair_potential.hpp"
#include "pardyn/plugin_export.hpp"

PARDYN_PAIR_POTENTIAL_PLUGIN(pardyn::potentials::SoftGas)
