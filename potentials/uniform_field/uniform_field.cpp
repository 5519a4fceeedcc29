#include "uniform_field.hpp"

PARDYN_EXTERNAL_POTENTIAL_PLUGIN(pardyn::potentials::UniformField)
