// Cell-list traversal on the GPU. (Placeholder: the cell_list work replaces it.)
#pragma once

#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"

namespace pardyn::cuda {

template <class Eval, class View>
void cell_list_forces(const Eval&, const View&, const CellList&, const Box&, bool /*energy*/) {
  throw Error("the cell-list traversal is not implemented on the GPU yet");
}

}  // namespace pardyn::cuda
