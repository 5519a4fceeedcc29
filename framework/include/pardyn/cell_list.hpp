// The cell-list neighbourhood: what the cell_list scheme builds and the cell-list traversals read.
// (Placeholder: the cell_list work defines its contents.)
#pragma once

#include "pardyn/plugin.hpp"

namespace pardyn {

struct CellList {};

}  // namespace pardyn
