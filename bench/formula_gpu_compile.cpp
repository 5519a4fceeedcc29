// SPDX-License-Identifier: BSD-3-Clause
// bench_formula_compile: what a formula law's first GPU run costs before its first step, as the
// expression plugin pays it (docs/formulas.md, "On the GPU"): the kernels of one traversal group
// compiled by NVRTC and written to the cache (cold), then read back from it (cached), and, where a
// GPU is present, loaded into it (cudaLibraryLoadData and the kernels' handles).
//
//   bench_formula_compile [--law lj|soft_gas|gravity] [--group cell_list|cell_far|tree|all_pairs|all_pairs_periodic]
//                         [--dim 2|3] [--precision float|double] [--arch sm_90] [--repeat 3]
//
// Each repeat uses a fresh cache folder (under $TMPDIR) for its cold compile. Without a GPU the
// load is skipped (said so); --arch then names the architecture to compile for (with a GPU, the
// device's own is used, as a run does).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

#include "expression_gpu.hpp"
#include "nvrtc.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/core.hpp"

using namespace pardyn;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string arg(const std::map<std::string, std::string>& a, const std::string& k,
                const std::string& dflt) {
  const auto it = a.find(k);
  return it == a.end() ? dflt : it->second;
}

// The laws of bench_cell_list's expression forms (lj, soft_gas, gravity), as TOML.
std::string law_toml(const std::string& law) {
  if (law == "lj")
    return "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
           "parameters = { epsilon = 1.0, sigma = 1.0 }\nrcut = 2.5\nshift = false\n";
  if (law == "soft_gas")
    return "parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
           "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
           "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", r0 = \"rc\", "
           "radius = \"sqrt(rc^2 - eps^2)\" }\n";
  if (law == "gravity")  // the kernel alone: no formula part
    return "long_range = { kernel = \"gravity\", strength = 1.0, softening = 0.01 }\n";
  throw Error("--law must be lj, soft_gas or gravity");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::map<std::string, std::string> a;
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k.rfind("--", 0) != 0 || i + 1 >= argc) {
        std::fprintf(stderr,
                     "usage: %s [--law lj|soft_gas|gravity] [--group "
                     "cell_list|cell_far|tree|all_pairs|all_pairs_periodic] "
                     "[--dim 2|3] [--precision float|double] [--arch sm_90] [--repeat 3]\n",
                     argv[0]);
        return 2;
      }
      a[k.substr(2)] = argv[++i];
    }
    const std::string law_name = arg(a, "law", "lj");
    const std::string group = arg(a, "group", law_name == "lj" ? "cell_list" : "cell_far");
    const int dim = std::stoi(arg(a, "dim", law_name == "lj" ? "3" : "2"));
    if (law_name == "lj" && (group == "tree" || group == "cell_far"))
      throw Error("--group " + group +
                  " needs a law with a far field (--law soft_gas or gravity): "
                  "lj has a cut-off only, and a run refuses it on that scheme too");
    const bool dbl = arg(a, "precision", "float") == "double";
    const int repeat = std::stoi(arg(a, "repeat", "3"));

    int devices = 0;
    const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    std::string arch = arg(a, "arch", "sm_90");
    if (gpu) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess)
        throw Error("cannot read the GPU's compute capability");
      arch = "sm_" + std::to_string(major * 10 + minor);
      // The context, made before the timings (a run has it already).
      if (cudaFree(nullptr) != cudaSuccess) throw Error("cannot make a CUDA context on device 0");
    }

    Registry reg;
    reg.load_path(Registry::builtin_plugin_dir());
    const FactoryInfo* info = reg.find(PluginKind::Potential, "expression");
    if (!info) throw Error("the expression plugin is not in " + Registry::builtin_plugin_dir());
    const expression::Law law =
        expression::make_law(parse_params(info->schema, law_toml(law_name), "expression"));
    const auto t_sdk = Clock::now();
    const jit::Sdk& sdk =
        jit::find_sdk(Registry::builtin_plugin_dir() + "/libpardyn_expression.so");
    const double sdk_s = since(t_sdk);
    const jit::GpuSource src = expression::gpu_program(law, group, dim, dbl, sdk, arch);
    std::printf(
        "NVRTC %s, %s, law %s, group %s (%zu kernels), %dD %s; the SDK headers' hash %.3f s\n",
        jit::nvrtc_version().c_str(), arch.c_str(), law_name.c_str(), group.c_str(),
        src.names.size(), dim, dbl ? "double" : "float", sdk_s);
    const fs::path base =
        fs::temp_directory_path() / ("pardyn-bench-formula-" + std::to_string(::getpid()));
    for (int r = 0; r < repeat; ++r) {
      const fs::path dir = base / std::to_string(r);
      fs::remove_all(dir);
      ::setenv("PARDYN_CACHE_DIR", dir.c_str(), 1);
      const jit::GpuBuilt cold = jit::cached_cubin(src);
      const jit::GpuBuilt warm = jit::cached_cubin(src);
      if (cold.cached || !warm.cached)
        throw Error("the cache did not behave: cold " + std::to_string(cold.cached) + ", warm " +
                    std::to_string(warm.cached));
      std::printf(
          "%s %s: cold compile + write %.3f s (cubin %zu bytes); cached: read + check %.4f s",
          law_name.c_str(), group.c_str(), cold.seconds, cold.cubin.code.size(), warm.seconds);
      if (gpu) {
        const auto t0 = Clock::now();
        const jit::GpuModule m(warm.cubin);
        std::printf("; load into the GPU %.4f s (cached total %.4f s)", since(t0),
                    since(t0) + warm.seconds);
      } else {
        std::printf("; no GPU: the load is not measured");
      }
      std::printf("\n");
    }
    fs::remove_all(base);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_formula_compile: %s\n", e.what());
    return 1;
  }
}
