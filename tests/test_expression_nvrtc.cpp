// SPDX-License-Identifier: BSD-3-Clause
// Formula laws on the GPU without a GPU: what a run compiles with NVRTC (the generated program and
// its kernels' names), the compiled cubin's cache (its key, its entries, a damaged entry rebuilt)
// and a failed compile's message (docs/formulas.md, "On the GPU"). NVRTC is a host library; the
// forces on a GPU are ExpressionCuda's (test_expression.cpp).
#include <gtest/gtest.h>

#if defined(PARDYN_EXPRESSION_GPU)

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile.hpp"
#include "expression_gpu.hpp"
#include "nvrtc.hpp"
#include "support.hpp"

using namespace pardyn;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// NVRTC itself must work here (its builtins library found): a toolkit without it skips, saying so.
std::string nvrtc_missing() {
  try {
    jit::GpuSource s;
    s.what = "an empty kernel";
    s.source = "__global__ void k() {}\n";
    s.arch = "sm_90";
    jit::compile_cubin(s);
    return "";
  } catch (const Error& e) {
    return std::string("NVRTC cannot compile an empty kernel here: ") + e.what();
  }
}
#define PARDYN_SKIP_WITHOUT_NVRTC()                                                              \
  if (const std::string pardyn_nvrtc_missing_ = nvrtc_missing(); !pardyn_nvrtc_missing_.empty()) \
  GTEST_SKIP() << pardyn_nvrtc_missing_

// A small program with one kernel, as the cache sees any.
jit::GpuSource tiny(const std::string& body = "x[0] = 1;") {
  jit::GpuSource s;
  s.what = "a test kernel";
  s.source = "template <class T> __global__ void k(T* x) { " + body + " }\n";
  s.names = {"&k<float>"};
  s.arch = "sm_90";
  return s;
}

expression::Law lj() {
  return expression::make_law(
      test::params_for(PluginKind::Potential, "expression",
                       "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
                       "parameters = { epsilon = 1.2, sigma = 0.9 }\nrcut = 2.5"));
}

const jit::Sdk& sdk() {
  // The plugin's place in the build tree decides where the SDK headers are.
  return jit::find_sdk(std::string(PARDYN_BINARY_DIR) +
                       "/lib/pardyn/plugins/libpardyn_expression.so");
}

}  // namespace

// A cache entry reads back whole, and a cut or changed one is refused (then rebuilt).
TEST(ExpressionNvrtc, CacheEntriesReadBackAndDamageIsNoticed) {
  jit::Cubin c;
  c.code = {'\x7f', 'E', 'L', 'F', '\0', '\n', 'x'};
  c.lowered = {{"&k<float>", "_Z1kIfEvPT_"}, {"&k<double>", "_Z1kIdEvPT_"}};
  const std::string bytes = jit::serialize(c);
  jit::Cubin back;
  ASSERT_TRUE(jit::parse(bytes, back));
  EXPECT_EQ(back.code, c.code);
  EXPECT_EQ(back.lowered, c.lowered);
  for (std::size_t cut : {std::size_t(0), std::size_t(10), bytes.size() / 2, bytes.size() - 1})
    EXPECT_FALSE(jit::parse(bytes.substr(0, cut), back)) << "cut at " << cut;
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string bad = bytes;
    bad[at] = char(bad[at] ^ 0x20);
    EXPECT_FALSE(jit::parse(bad, back)) << "byte " << at << " changed";
  }
}

// The key changes with everything that decides the code, and only with it.
TEST(ExpressionNvrtc, CacheKeyFollowsWhatDecidesTheCode) {
  const jit::GpuSource a = tiny();
  EXPECT_EQ(jit::cubin_key(a), jit::cubin_key(tiny()));
  auto b = a;
  b.source += "// another formula\n";
  EXPECT_NE(jit::cubin_key(a), jit::cubin_key(b));
  b = a, b.arch = "sm_80";
  EXPECT_NE(jit::cubin_key(a), jit::cubin_key(b));
  b = a, b.names.push_back("&k<double>");
  EXPECT_NE(jit::cubin_key(a), jit::cubin_key(b));
  b = a, b.headers["expression_eval.hpp"] = "// another version";
  EXPECT_NE(jit::cubin_key(a), jit::cubin_key(b));
  b = a, b.sdk_identity = "another build's headers";
  EXPECT_NE(jit::cubin_key(a), jit::cubin_key(b));
  b = a, b.what = "the same code under another name";
  EXPECT_EQ(jit::cubin_key(a), jit::cubin_key(b));
  // The LJ formula with other values of its parameters is the same code (the constants are read
  // at run time); another formula is not.
  EXPECT_EQ(expression::formula_struct(lj()),
            expression::formula_struct(expression::make_law(
                test::params_for(PluginKind::Potential, "expression",
                                 "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
                                 "parameters = { epsilon = 2.0, sigma = 1.1 }\nrcut = 3.0"))));
}

// Compiled once, then read from the cache; a damaged entry is compiled again, a temporary file
// never left behind.
TEST(ExpressionNvrtc, CompiledOnceThenCachedAndDamageRebuilt) {
  PARDYN_SKIP_WITHOUT_NVRTC();
  const std::string dir = test::scratch_dir("expression-nvrtc-cache");
  fs::remove_all(dir);
  const ScopedEnv env("PARDYN_CACHE_DIR", dir);
  const jit::GpuSource s = tiny();
  const jit::GpuBuilt first = jit::cached_cubin(s);
  EXPECT_FALSE(first.cached);
  EXPECT_FALSE(first.cubin.code.empty());
  EXPECT_FALSE(first.cubin.lowered.at("&k<float>").empty());
  const jit::GpuBuilt again = jit::cached_cubin(s);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.path, first.path);
  EXPECT_EQ(again.cubin.code, first.cubin.code);
  EXPECT_EQ(again.cubin.lowered, first.cubin.lowered);
  {
    std::fstream f(first.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(fs::file_size(first.path) / 2));
    f.put('#');
  }
  const jit::GpuBuilt rebuilt = jit::cached_cubin(s);
  EXPECT_FALSE(rebuilt.cached);
  EXPECT_EQ(rebuilt.cubin.code, first.cubin.code);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

// A failed compile says what failed and where its messages are, without printing them unless
// PARDYN_JIT_VERBOSE asks.
TEST(ExpressionNvrtc, FailedCompileIsClearAndQuiet) {
  PARDYN_SKIP_WITHOUT_NVRTC();
  const std::string dir = test::scratch_dir("expression-nvrtc-fail");
  const ScopedEnv env("PARDYN_CACHE_DIR", dir);
  const jit::GpuSource s = tiny("undeclared_name = 1;");
  std::string quiet, verbose;
  try {
    const ScopedEnv v("PARDYN_JIT_VERBOSE", "");
    jit::compile_cubin(s);
  } catch (const Error& e) {
    quiet = e.what();
  }
  try {
    const ScopedEnv v("PARDYN_JIT_VERBOSE", "1");
    jit::compile_cubin(s);
  } catch (const Error& e) {
    verbose = e.what();
  }
  EXPECT_NE(quiet.find("compiling a test kernel for the GPU (sm_90) with NVRTC"), std::string::npos)
      << quiet;
  EXPECT_NE(quiet.find("PARDYN_JIT_VERBOSE=1 prints them"), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("undeclared_name"), std::string::npos) << quiet;
  EXPECT_NE(verbose.find("undeclared_name"), std::string::npos) << verbose;
}

// What a run of the LJ formula on the cell list compiles (3D float): the program pardyn writes,
// every kernel the cell list's launcher may start, lowered to a kernel of the cubin.
TEST(ExpressionNvrtc, CompilesWhatACellListRunCompiles) {
  PARDYN_SKIP_WITHOUT_NVRTC();
  const jit::GpuSource s = expression::gpu_program(lj(), "cell_list", 3, false, sdk(), "sm_90");
  EXPECT_EQ(s.names.size(), 8u);  // Verlet list and stencil x energy x periodic
  EXPECT_NE(s.source.find("struct Generated"), std::string::npos);
  const jit::Cubin c = jit::compile_cubin(s);
  EXPECT_FALSE(c.code.empty());
  ASSERT_EQ(c.lowered.size(), s.names.size());
  for (const auto& n : s.names) EXPECT_NE(c.lowered.at(n).find("cl_"), std::string::npos) << n;
}

// The real gas's formula on the tree, 2D double (the kernel and a formula inside its radius).
TEST(ExpressionNvrtc, CompilesWhatATreeRunCompiles) {
  PARDYN_SKIP_WITHOUT_NVRTC();
  const expression::Law gas = expression::make_law(test::params_for(
      PluginKind::Potential, "expression",
      "parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
      "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
      "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", r0 = \"rc\", "
      "radius = \"sqrt(rc^2 - eps^2)\" }"));
  const jit::GpuSource s = expression::gpu_program(gas, "tree", 2, true, sdk(), "sm_90");
  EXPECT_EQ(s.names.size(), 4u);  // energy x quadrupoles
  const jit::Cubin c = jit::compile_cubin(s);
  ASSERT_EQ(c.lowered.size(), s.names.size());
  for (const auto& n : s.names) EXPECT_NE(c.lowered.at(n).find("tree_walk"), std::string::npos);
}

#endif  // PARDYN_EXPRESSION_GPU
