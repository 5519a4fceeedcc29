// Tree walk on the CPU. (Placeholder: the tree work replaces it.)
#pragma once

#include "pardyn/box.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::cpu {

template <class Eval, class View>
void tree_forces(const Eval&, const View&, const Tree&, const Box&, bool /*energy*/) {
  throw Error("the tree walk is not implemented yet");
}

}  // namespace pardyn::cpu
