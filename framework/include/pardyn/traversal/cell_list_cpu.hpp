// Cell-list traversal on the CPU. (Placeholder: the cell_list work replaces it.)
#pragma once

#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"

namespace pardyn::cpu {

template <class Eval, class View>
void cell_list_forces(const Eval&, const View&, const CellList&, const Box&, bool /*energy*/) {
  throw Error("the cell-list traversal is not implemented yet");
}

}  // namespace pardyn::cpu
