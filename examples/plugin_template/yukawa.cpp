// Registration: one line.
#include "yukawa.hpp"

#include "pardyn/pair_potential.hpp"

PARDYN_PAIR_POTENTIAL_PLUGIN(Yukawa)
