// SPDX-License-Identifier: BSD-3-Clause
#include "uniform_field.hpp"

#include "pardyn/plugin_export.hpp"

PARDYN_EXTERNAL_POTENTIAL_PLUGIN(pardyn::potentials::UniformField)
