// SPDX-License-Identifier: BSD-3-Clause
// An expression law on the GPU (expression_gpu.hpp). The host side is the built-in laws' own
// (pair_forces_cuda and the traversals' launchers); only the kernels differ: instead of nvcc's
// instantiations, RtcKernels hands the launchers the same kernel templates compiled by NVRTC for
// the generated evaluator (`Generated`, law.cpp's formula_struct), one compile per traversal
// (its group: the cell list, its far zones, the tree, all_pairs), dimension and precision, cached
// on disk (jit/nvrtc.hpp). The host builds the evaluator as expression::Evaluator<F, Real,
// NoFormula>: the same members (the formula part holds no data), so its bytes are the kernel's
// argument.
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>

#include "compile.hpp"
#include "expression_gpu.hpp"
#include "nvrtc.hpp"
#include "pardyn/pair_potential_cuda.cuh"

namespace pardyn::expression {

extern const char* const kEmbedded_expression_coefs_hpp;
extern const char* const kEmbedded_expression_eval_hpp;

namespace {

const char* form_enumerator(Form f) {
  const char* names[] = {"Cutoff", "Plain", "Gravity", "Log", "ShortGravity", "ShortLog"};
  return names[int(f)];
}

// The kernels of traversal group `group` for precision Real and dimension Dim (their descriptors'
// Group, launch_cuda.cuh) and the header that defines them.
template <class Real, int Dim>
const char* group_kernels(const std::string& group, const std::string& eval,
                          std::vector<std::string>& out) {
  using Cl = cuda::detail::ClGroup<void, Real, Dim>;
  using Far = cuda::detail::ClFarGroup<void, Real, Dim>;
  using Tree = cuda::tree_walk_detail::Group<void, Real, Dim>;
  using All = cuda::detail::AllPairsGroup<void, Real, Dim, false>;
  using AllPeriodic = cuda::detail::AllPairsGroup<void, Real, Dim, true>;
  if (group == Cl::id) return Cl::names(eval, out), Cl::header;
  if (group == Far::id) return Far::names(eval, out), Far::header;
  if (group == Tree::id) return Tree::names(eval, out), Tree::header;
  if (group == All::id) return All::names(eval, out), All::header;
  if (group == AllPeriodic::id) return AllPeriodic::names(eval, out), AllPeriodic::header;
  throw Error("internal: no GPU traversal group '" + group + "'");
}

class Engine;

// The launchers' Kernels policy (launch_cuda.cuh): kernel K of the law's module for K's group.
struct RtcKernels {
  Engine* engine;
  std::string eval;  // the evaluator's spelling in the name expressions
  int dim;
  bool dbl;
  template <class K, class... Args>
  const void* get() const;
};

class Engine final : public GpuEngine {
 public:
  Engine(const Law& law, bool quiet, std::string plugin_file)
      : law_(law), quiet_(quiet), plugin_file_(std::move(plugin_file)) {}

  ~Engine() override {
    modules_.clear();
    // At exit the runtime may be gone already (cudaErrorCudartUnloading): nothing to free then.
    for (void* t : {table_f_, table_d_})
      if (t) (void)cudaFree(t);
  }

  void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) override {
    switch (law_.params.form) {
      case Form::Cutoff: return run<Form::Cutoff>(s, nb, req);
      case Form::Plain: return run<Form::Plain>(s, nb, req);
      case Form::Gravity: return run<Form::Gravity>(s, nb, req);
      case Form::Log: return run<Form::Log>(s, nb, req);
      case Form::ShortGravity: return run<Form::ShortGravity>(s, nb, req);
      case Form::ShortLog: return run<Form::ShortLog>(s, nb, req);
    }
    throw Error("internal: an expression law of unknown form");
  }

  // The kernel `name` of group `id` for the store's dimension and precision: the group compiled,
  // or read from the cache, on first use.
  const void* kernel(const char* id, int dim, bool dbl, const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_tuple(std::string(id), dim, dbl);
    auto it = modules_.find(key);
    if (it == modules_.end()) it = modules_.emplace(key, load(id, dim, dbl)).first;
    return it->second->kernel(name);
  }

 private:
  template <Form F>
  void run(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) {
    visit(s, [&](auto view) {
      using Real = typename decltype(view)::real;
      using Eval = expression::Evaluator<F, Real, NoFormula>;
      const Eval ev(law_.params, device_table<Real>());
      const bool dbl = sizeof(Real) == sizeof(double);
      const RtcKernels ks{this, gpu_evaluator_name(law_, dbl ? "double" : "float"),
                          int(decltype(view)::dim), dbl};
      cuda::pair_forces_cuda(ev, view, nb, req, ks);
    });
  }

  // The device copy of the coefficient table (a law with per-type values), made once.
  template <class Real>
  const Real* device_table() {
    if (law_.params.uniform) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    void*& t = sizeof(Real) == sizeof(double) ? table_d_ : table_f_;
    if (!t) {
      const auto& v = [&]() -> const std::vector<Real>& {
        if constexpr (sizeof(Real) == sizeof(double)) return law_.params.coef_d;
        else return law_.params.coef_f;
      }();
      void* p = nullptr;
      PARDYN_CUDA_CHECK(cudaMalloc(&p, v.size() * sizeof(Real)));
      t = p;
      PARDYN_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(Real), cudaMemcpyHostToDevice));
    }
    return static_cast<const Real*>(t);
  }

  std::unique_ptr<jit::GpuModule> load(const char* id, int dim, bool dbl) {
    const jit::GpuSource src = gpu_program(law_, id, dim, dbl, jit::find_sdk(plugin_file_), arch());
    for (int attempt = 0;; ++attempt) {
      const jit::GpuBuilt built = jit::cached_cubin(src);
      if (!built.cached && !quiet_)
        std::fprintf(stderr,
                     "pardyn: %s: compiled the formula for the GPU (%s) in %.1f s (cached in %s)\n",
                     law_.label.c_str(), src.arch.c_str(), built.seconds, jit::cache_dir().c_str());
      try {
        return std::make_unique<jit::GpuModule>(built.cubin);
      } catch (const Error&) {
        // A cached entry CUDA cannot load (written by another driver, damaged): compiled again.
        if (!built.cached || attempt > 0) throw;
        jit::discard(built.path);
      }
    }
  }

  // The current device's architecture, which NVRTC must know.
  std::string arch() {
    int dev = 0, major = 0, minor = 0;
    PARDYN_CUDA_CHECK(cudaGetDevice(&dev));
    PARDYN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    PARDYN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    const int sm = major * 10 + minor;
    if (!jit::nvrtc_supports(sm))
      throw Error(law_.label + ": this GPU is sm_" + std::to_string(sm) + ", which NVRTC " +
                  jit::nvrtc_version() +
                  " cannot compile for; use a CUDA toolkit that knows it, or backend = \"cpu\"");
    return "sm_" + std::to_string(sm);
  }

  const Law& law_;
  bool quiet_;
  std::string plugin_file_;
  std::mutex mutex_;
  std::map<std::tuple<std::string, int, bool>, std::unique_ptr<jit::GpuModule>> modules_;
  void* table_f_ = nullptr;
  void* table_d_ = nullptr;
};

template <class K, class... Args>
const void* RtcKernels::get() const {
  using G = typename K::Group;
  return engine->kernel(G::id, dim, dbl, K::name(eval));
}

}  // namespace

std::string gpu_evaluator_name(const Law& law, const std::string& real) {
  const std::string ns = "pardyn::expression::";
  return ns + "Evaluator<" + ns + "Form::" + form_enumerator(law.params.form) + ", " + real + ", " +
         ns + (has_formula(law.params.form) ? "Generated" : "NoFormula") + ">";
}

jit::GpuSource gpu_program(const Law& law, const std::string& group, int dim, bool dbl,
                           const jit::Sdk& sdk, const std::string& arch) {
  jit::GpuSource src;
  src.what = law.label + " (" + group + ", " + std::to_string(dim) + "D " +
             (dbl ? "double" : "float") + ")";
  const std::string eval = gpu_evaluator_name(law, dbl ? "double" : "float");
  const char* header = nullptr;
  if (dim == 2)
    header = dbl ? group_kernels<double, 2>(group, eval, src.names)
                 : group_kernels<float, 2>(group, eval, src.names);
  else
    header = dbl ? group_kernels<double, 3>(group, eval, src.names)
                 : group_kernels<float, 3>(group, eval, src.names);
  src.source = "// Generated by pardyn's expression plugin for " + law.label + "\n";
  src.source += "#include \"expression_eval.hpp\"\n#include \"" + std::string(header) + "\"\n";
  if (has_formula(law.params.form))
    src.source += "namespace pardyn::expression {\n" + formula_struct(law) +
                  "}  // namespace pardyn::expression\n";
  src.headers = {{"expression_coefs.hpp", kEmbedded_expression_coefs_hpp},
                 {"expression_eval.hpp", kEmbedded_expression_eval_hpp}};
  src.include_dirs = sdk.include_dirs;
  src.sdk_identity = sdk.identity;
  src.arch = arch;
  return src;
}

std::unique_ptr<GpuEngine> make_gpu_engine(const Law& law, bool quiet,
                                           const std::string& plugin_file) {
  return std::make_unique<Engine>(law, quiet, plugin_file);
}

}  // namespace pardyn::expression
