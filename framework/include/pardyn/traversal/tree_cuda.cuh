// Tree walk on the GPU. (Placeholder: the tree work replaces it.)
#pragma once

#include "pardyn/box.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::cuda {

template <class Eval, class View>
void tree_forces(const Eval&, const View&, const Tree&, const Box&, bool /*energy*/) {
  throw Error("the tree walk is not implemented on the GPU yet");
}

}  // namespace pardyn::cuda
