// SPDX-License-Identifier: BSD-3-Clause
// The cell list's GPU engine in a build without CUDA: it says why it cannot run (the tree's is
// chosen by BackendChoice, pardyn/backend_choice.hpp, which says why a build without CUDA has none).
#include "backend/cuda_stub.hpp"
#include "cell_list_impl.hpp"

namespace pardyn::detail {
std::unique_ptr<CellEngine> make_cuda_cell_engine() { cuda::no_cuda("the cell list on the GPU"); }
}  // namespace pardyn::detail
