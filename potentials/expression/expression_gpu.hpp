// SPDX-License-Identifier: BSD-3-Clause
// An expression law on the GPU (expression_cuda.cu; docs/formulas.md, "On the GPU"): the framework's
// CUDA traversals compiled at run time by NVRTC for the law's generated evaluator, cached on disk,
// and launched by the same host launchers as a built-in law's (launch_cuda.cuh).
#pragma once

#include <memory>
#include <string>

#include "law.hpp"
#include "nvrtc.hpp"
#include "pardyn/neighbourhood.hpp"
#include "pardyn/potential.hpp"

namespace pardyn::expression {

class GpuEngine {
 public:
  virtual ~GpuEngine() = default;
  // The law's forces on a CUDA store; compiles (or loads from the cache) the kernels of the
  // neighbourhood's traversal for the store's dimension and precision on first use.
  virtual void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) = 0;
};

// `law` must outlive the engine; `plugin_file` locates the SDK headers NVRTC compiles; `quiet`
// silences the line that reports a compile.
std::unique_ptr<GpuEngine> make_gpu_engine(const Law& law, bool quiet,
                                           const std::string& plugin_file);

// What NVRTC compiles for `law` on traversal group `group` ("cell_list", "cell_far", "tree",
// "all_pairs", "all_pairs_periodic"; launch_cuda.cuh) in `dim` dimensions and double or float: the program (the embedded
// expression headers, the traversal's header, the law's formula_struct), every kernel that group's
// launcher may start, for architecture `arch` ("sm_90"). Needs no GPU (the tests compile it).
jit::GpuSource gpu_program(const Law& law, const std::string& group, int dim, bool dbl,
                           const jit::Sdk& sdk, const std::string& arch);

// The spelling of the law's evaluator type for precision `real` ("float", "double"), as the
// kernels' name expressions give it.
std::string gpu_evaluator_name(const Law& law, const std::string& real);

}  // namespace pardyn::expression
