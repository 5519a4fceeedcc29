// SPDX-License-Identifier: BSD-3-Clause
// bench_nvrtc: what compiling a formula law for the GPU at run time costs (docs/formulas.md, "On the
// GPU"; bench/RESULTS.md, "NVRTC"). Needs no GPU: NVRTC and nvJitLink are host libraries.
//
//   bench_nvrtc [--dim 2|3] [--precision float|double] [--arch sm_90] [--repeat 3]
//               [--route templates|lto|headers|all] [--check]
//
// The law is Lennard-Jones as pardyn's code generator writes a formula (expression_eval.hpp's
// cut-off evaluator, the formula as c0 r^-12 - c1 r^-6 from 1/r^2), and the kernels are the cell
// list's (Verlet list and stencil, with and without energies, periodic or not: 8 kernels, all a run
// of one dimension and precision can launch). Two routes:
//   templates  NVRTC compiles the framework's traversal templates (pardyn/traversal/
//              cell_list_cuda.cuh, the device-clean headers, pardyn/rtc for the standard headers)
//              instantiated for the law: one compile, the law inlined into the kernels;
//   lto        the kernels are compiled once (at pardyn's build) to LTO-IR with the formula an
//              external device function; at run time NVRTC compiles only the formula to LTO-IR
//              and nvJitLink links and optimises the whole (-lto) into a cubin.
//   headers    what the standard headers cost NVRTC: a kernel using <type_traits> and <cmath> from
//              pardyn/rtc against the same from CCCL (<cuda/std/...>, in the toolkit).
// Prints the wall time of each run-time step, `repeat` times. --check compiles every traversal's
// kernels (cell list, far zones, tree, all_pairs) for formula laws of the forms that use them and
// checks that each is in the cubin (ctest nvrtc.traversal_kernels); it exits 77 (skipped) where
// NVRTC cannot compile even an empty kernel.
#include <nvJitLink.h>
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void nvrtc_ok(nvrtcResult r, nvrtcProgram prog, const char* what) {
  if (r == NVRTC_SUCCESS) return;
  std::string log;
  if (prog) {
    std::size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    log.resize(n);
    nvrtcGetProgramLog(prog, log.data());
  }
  throw std::runtime_error(std::string(what) + ": " + nvrtcGetErrorString(r) + "\n" + log);
}

void jit_ok(nvJitLinkResult r, nvJitLinkHandle h, const char* what) {
  if (r == NVJITLINK_SUCCESS) return;
  std::string log;
  std::size_t n = 0;
  if (h && nvJitLinkGetErrorLogSize(h, &n) == NVJITLINK_SUCCESS && n > 0) {
    log.resize(n);
    nvJitLinkGetErrorLog(h, log.data());
  }
  throw std::runtime_error(std::string(what) + ": nvJitLink error " + std::to_string(int(r)) +
                           "\n" + log);
}

struct Output {
  std::vector<char> code;                      // cubin or LTO-IR
  std::map<std::string, std::string> lowered;  // name expression -> mangled kernel name
  double seconds = 0;
};

// Compiles `src` with NVRTC; `names` are the kernels' name expressions to instantiate and look up.
Output compile(const std::string& src, const std::vector<std::string>& options,
               const std::vector<std::string>& names, bool lto) {
  nvrtcProgram prog = nullptr;
  nvrtc_ok(nvrtcCreateProgram(&prog, src.c_str(), "law.cu", 0, nullptr, nullptr), nullptr,
           "nvrtcCreateProgram");
  for (const auto& n : names) nvrtc_ok(nvrtcAddNameExpression(prog, n.c_str()), prog, n.c_str());
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  Output out;
  const auto t0 = Clock::now();
  nvrtc_ok(nvrtcCompileProgram(prog, int(opts.size()), opts.data()), prog, "NVRTC compile");
  out.seconds = seconds_since(t0);
  std::size_t size = 0;
  if (lto) {
    nvrtc_ok(nvrtcGetLTOIRSize(prog, &size), prog, "nvrtcGetLTOIRSize");
    out.code.resize(size);
    nvrtc_ok(nvrtcGetLTOIR(prog, out.code.data()), prog, "nvrtcGetLTOIR");
  } else {
    nvrtc_ok(nvrtcGetCUBINSize(prog, &size), prog, "nvrtcGetCUBINSize");
    out.code.resize(size);
    nvrtc_ok(nvrtcGetCUBIN(prog, out.code.data()), prog, "nvrtcGetCUBIN");
  }
  for (const auto& n : names) {
    const char* m = nullptr;
    nvrtc_ok(nvrtcGetLoweredName(prog, n.c_str(), &m), prog, n.c_str());
    out.lowered[n] = m;
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

std::string arg(const std::map<std::string, std::string>& a, const std::string& k,
                const std::string& dflt) {
  const auto it = a.find(k);
  return it == a.end() ? dflt : it->second;
}

// The formula of LJ as the code generator writes it: the coefficients (4 eps sigma^12, 4 eps
// sigma^6, the shift, 48 eps sigma^12, 24 eps sigma^6) from the law's parameters.
const char* kFormula = R"(
    const Real t0 = Real(1) / r2;
    const Real t1 = t0 * t0 * t0;
    const Real t2 = t1 * t1;
    e = c[0] * t2 - c[1] * t1 - c[2];
    fdivr = (c[3] * t2 - c[4] * t1) * t0;
)";

// A program of `includes` with the formula `body` as expression_eval.hpp's Impl (`Generated`).
std::string law_source(const std::string& includes, const std::string& body) {
  return includes + R"(namespace pardyn::expression {
struct Generated {
  template <class Real>
  PARDYN_HD PARDYN_INLINE static void formula(const Coefs<Real>& k, Real r2, Real s, int ti,
                                              int tj, Real& fdivr, Real& e) {
    const Real* __restrict c = k.c;
    (void)r2, (void)s, (void)ti, (void)tj;
)" + body +
         R"(  }
};
}  // namespace pardyn::expression
)";
}

std::string templates_source() {
  return law_source(
      "#include \"expression_eval.hpp\"\n#include \"pardyn/traversal/cell_list_cuda.cuh\"\n",
      kFormula);
}

// --check: every traversal's kernels, for the law forms that use them (a cut-off formula on the
// cell list; the kernel plus a formula inside its radius, as the real gas's, on the far zones and
// the tree; the kernel alone, as gravity's, on all_pairs), in one program.
std::string check_source() {
  return law_source(R"(#include "expression_eval.hpp"
#include "pardyn/traversal/all_pairs_cuda.cuh"
#include "pardyn/traversal/cell_list_cuda.cuh"
#include "pardyn/traversal/tree_cuda.cuh"
)",
                    R"(    const Real in = s < c[0] ? Real(1) : Real(0);
    e = in * (c[1] * (Real(1) / s - c[2]) + c[3] * log(s * c[4]));
    fdivr = in * (c[5] / (s * s) - c[6] / s);
)");
}

std::vector<std::string> check_names(const std::string& real, const std::string& dim) {
  const std::string ns = "pardyn::expression::";
  const std::string cutoff =
      ns + "Evaluator<" + ns + "Form::Cutoff, " + real + ", " + ns + "Generated>";
  const std::string short_log =
      ns + "Evaluator<" + ns + "Form::ShortLog, " + real + ", " + ns + "Generated>";
  const std::string gravity =
      ns + "Evaluator<" + ns + "Form::Gravity, " + real + ", " + ns + "NoFormula>";
  const std::string rd = real + ", " + dim;
  const std::string shape = "pardyn::cuda::AllPairsShape<" + rd + ">";
  std::vector<std::string> names;
  for (const char* e : {"false", "true"}) {
    for (const char* b : {"false", "true"}) {
      names.push_back("&pardyn::cuda::detail::cl_verlet_kernel<" + cutoff + ", " + rd + ", " + e +
                      ", " + b + ">");
      names.push_back("&pardyn::cuda::detail::cl_stencil_kernel<" + cutoff + ", " + rd + ", " + e +
                      ", " + b + ">");
      names.push_back("&pardyn::cuda::detail::cl_far_kernel<" + short_log + ", " + rd + ", " + e +
                      ", " + b + ">");
      names.push_back("&pardyn::cuda::tree_walk_detail::tree_walk_kernel<" + short_log + ", " + rd +
                      ", " + e + ", " + b + ">");
      names.push_back("&pardyn::cuda::detail::all_pairs_kernel<" + gravity + ", " + rd + ", " + e +
                      ", " + b + ", " + shape + "::K, " + shape + "::T, " + shape + "::U>");
    }
    names.push_back("&pardyn::cuda::detail::all_pairs_finish<" + gravity + ", " + rd + ", " + e +
                    ">");
  }
  return names;
}

// The lto route's kernels: the same, with the formula an external device function.
std::string lto_kernels_source(const std::string& real) {
  return R"(#include "expression_eval.hpp"
#include "pardyn/traversal/cell_list_cuda.cuh"
extern "C" __device__ void pardyn_formula()" +
         real + " r2, const " + real + "* c, " + real + "& fdivr, " + real + R"(& e);
namespace pardyn::expression {
struct Generated {
  template <class Real>
  PARDYN_HD PARDYN_INLINE static void formula(const Coefs<Real>& k, Real r2, Real, int, int,
                                              Real& fdivr, Real& e) {
    pardyn_formula(r2, k.c, fdivr, e);
  }
};
}  // namespace pardyn::expression
)";
}

std::string lto_formula_source(const std::string& real) {
  return "using Real = " + real + R"(;
extern "C" __device__ void pardyn_formula(Real r2, const Real* __restrict c, Real& fdivr, Real& e) {)" +
         kFormula + "}\n";
}

std::vector<std::string> kernel_names(const std::string& real, const std::string& dim) {
  std::vector<std::string> names;
  for (const char* k : {"cl_verlet_kernel", "cl_stencil_kernel"})
    for (const char* e : {"false", "true"})
      for (const char* per : {"false", "true"})
        names.push_back(std::string("&pardyn::cuda::detail::") + k +
                        "<pardyn::expression::Evaluator<pardyn::expression::Form::Cutoff, " + real +
                        ", pardyn::expression::Generated>, " + real + ", " + dim + ", " + e + ", " +
                        per + ">");
  return names;
}

// A kernel that uses what the device-clean headers take from <type_traits> and <cmath>.
std::string headers_source(bool cccl) {
  const std::string inc = cccl ? "#include <cuda/std/type_traits>\n#include <cuda/std/cmath>\n"
                                 "namespace std { using namespace cuda::std; }\n"
                               : "#include <type_traits>\n#include <cmath>\n";
  return inc + R"(template <class T>
__global__ void k(T* x) {
  if constexpr (std::is_same_v<std::remove_cv_t<T>, float>) x[threadIdx.x] = std::sqrt(x[0]);
}
template __global__ void k<float>(float*);
)";
}

double link_lto(const std::vector<char>& kernels, const std::vector<char>& formula,
                const std::string& arch, std::size_t& cubin_bytes) {
  const std::string a = "-arch=" + arch;
  const char* opts[] = {a.c_str(), "-lto"};
  const auto t0 = Clock::now();
  nvJitLinkHandle h = nullptr;
  jit_ok(nvJitLinkCreate(&h, 2, opts), nullptr, "nvJitLinkCreate");
  jit_ok(nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, kernels.data(), kernels.size(), "kernels"), h,
         "nvJitLinkAddData kernels");
  jit_ok(nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, formula.data(), formula.size(), "formula"), h,
         "nvJitLinkAddData formula");
  jit_ok(nvJitLinkComplete(h), h, "nvJitLinkComplete");
  jit_ok(nvJitLinkGetLinkedCubinSize(h, &cubin_bytes), h, "nvJitLinkGetLinkedCubinSize");
  nvJitLinkDestroy(&h);
  return seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::map<std::string, std::string> a;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k == "--check") {
        check = true;
      } else if (k.rfind("--", 0) == 0 && i + 1 < argc) {
        a[k.substr(2)] = argv[++i];
      } else {
        std::fprintf(stderr,
                     "usage: %s [--dim 2|3] [--precision float|double] [--arch sm_90] "
                     "[--repeat 3] [--route templates|lto|headers|all] [--check]\n",
                     argv[0]);
        return 2;
      }
    }
    const std::string dim = arg(a, "dim", "3"), real = arg(a, "precision", "float");
    const std::string arch = arg(a, "arch", "sm_90"), route = arg(a, "route", "all");
    const int repeat = std::stoi(arg(a, "repeat", "3"));
    if ((dim != "2" && dim != "3") || (real != "float" && real != "double"))
      throw std::runtime_error("--dim must be 2 or 3, --precision float or double");
    const std::vector<std::string> base = {"-arch=" + arch,
                                           "-std=c++17",
                                           "-default-device",
                                           "-I" PARDYN_RTC_INCLUDE,
                                           "-I" PARDYN_SOURCE_INCLUDE,
                                           "-I" PARDYN_BUILD_INCLUDE,
                                           "-I" PARDYN_EXPRESSION_INCLUDE};
    const auto names = kernel_names(real, dim);
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    std::printf("NVRTC %d.%d, %s, %sD %s\n", major, minor, arch.c_str(), dim.c_str(), real.c_str());
    if (check) {
      // NVRTC itself must work here (its builtins library found, the architecture known): a
      // toolkit without it skips the check, saying why, rather than failing on our code.
      try {
        compile("__global__ void k() {}\n", {"-arch=" + arch}, {}, false);
      } catch (const std::exception& e) {
        std::printf("skipped: NVRTC cannot compile an empty kernel here: %s\n", e.what());
        return 77;
      }
      const Output o = compile(check_source(), base, check_names(real, dim), false);
      for (const auto& [n, m] : o.lowered)
        if (m.empty()) throw std::runtime_error("no kernel for " + n);
      std::printf(
          "check: %zu kernels of the cell list, its far zones, the tree and all_pairs in a "
          "cubin of %zu bytes, compiled in %.3f s\n",
          o.lowered.size(), o.code.size(), o.seconds);
      return o.code.empty() ? 1 : 0;
    }
    const bool all = route == "all";
    if (route == "headers" || all)
      for (int r = 0; r < repeat; ++r) {
        const std::vector<std::string> opts = {"-arch=" + arch, "-std=c++17", "-default-device"};
        auto own = opts;
        own.push_back("-I" PARDYN_RTC_INCLUDE);
        const double t_own = compile(headers_source(false), own, {}, false).seconds;
#if defined(PARDYN_CCCL_INCLUDE)
        auto cccl = opts;
        cccl.push_back("-I" PARDYN_CCCL_INCLUDE);
        const double t_cccl = compile(headers_source(true), cccl, {}, false).seconds;
        std::printf("headers: pardyn/rtc %.3f s, CCCL %.3f s\n", t_own, t_cccl);
#else
        std::printf("headers: pardyn/rtc %.3f s (CCCL's headers not found)\n", t_own);
#endif
      }
    if (route == "templates" || all)
      for (int r = 0; r < repeat; ++r) {
        const Output o = compile(templates_source(), base, names, false);
        std::printf("templates: %zu cell-list kernels, compile %.3f s, cubin %zu bytes\n",
                    names.size(), o.seconds, o.code.size());
      }
    if (route == "lto" || all) {
      auto opts = base;
      opts.push_back("-dlto");
      opts.push_back("-rdc=true");
      const Output k = compile(lto_kernels_source(real), opts, names, true);
      std::printf("lto: the kernels to LTO-IR (at pardyn's build) %.3f s, %zu bytes\n", k.seconds,
                  k.code.size());
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = Clock::now();
        const Output f = compile(lto_formula_source(real),
                                 {"-arch=" + arch, "-std=c++17", "-dlto", "-rdc=true"}, {}, true);
        std::size_t bytes = 0;
        const double link = link_lto(k.code, f.code, arch, bytes);
        std::printf("lto: formula %.3f s, link %.3f s, total %.3f s, cubin %zu bytes\n", f.seconds,
                    link, seconds_since(t0), bytes);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_nvrtc: %s\n", e.what());
    return 1;
  }
}
