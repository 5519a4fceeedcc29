// The tree neighbourhood: what the tree scheme builds and the tree walks read.
// (Placeholder: the tree work defines its contents.)
#pragma once

#include "pardyn/plugin.hpp"

namespace pardyn {

struct Tree {};

}  // namespace pardyn
