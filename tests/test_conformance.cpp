// SPDX-License-Identifier: BSD-3-Clause
// The conformance suite (framework/src/conformance/) for every potential there is: one test body,
// instantiated for each built-in law, the out-of-tree test plugin test_sticky, and every law in
// $PARDYN_PLUGIN_PATH. A law of this source tree must have its analytic values in tests/laws/NAME.csv
// (written by tests/laws/make_reference.py from the formula in the law's documentation); a law may
// name the parameters its checks use in tests/laws/NAME.params (TOML key = value lines) instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "conformance/conformance.hpp"
#include "pardyn/app/registry.hpp"

using namespace pardyn;
namespace fs = std::filesystem;

namespace {

// Built-in plugins, $PARDYN_PLUGIN_PATH, and the test plugin `sticky` (copied to a folder of this
// process's own with safe permissions: the loader refuses files others may write).
Registry& conformance_registry() {
  static Registry* reg = [] {
    auto* r = new Registry;  // never destroyed: objects made in tests may outlive static teardown
    r->load_default();
    const char* tmp = std::getenv("PARDYN_TEST_TMP");
    const fs::path dir = fs::path(tmp ? tmp : "/tmp/pardyn-test") /
                         ("conformance-plugins-" + std::to_string(::getpid()));
    const fs::path src = fs::path(Registry::builtin_plugin_dir()) / ".." / ".." / ".." / "tests" /
                         "plugins" / "sticky" / "libpardyn_sticky.so";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms(0755));
    fs::copy_file(src, dir / src.filename(), fs::copy_options::overwrite_existing);
    fs::permissions(dir / src.filename(), fs::perms(0755));
    r->load_path((dir / src.filename()).string());
    fs::remove_all(dir);  // loaded: the copy is no longer needed
    r->throw_if_refused();
    return r;
  }();
  return *reg;
}

// The laws to instantiate the test for, found without loading anything (every run of the test
// program lists them, whichever test it runs): the folders of potentials/ (a plugin's folder is its
// name), the test plugin, and the laws of $PARDYN_PLUGIN_PATH (loaded only when it is set).
std::vector<std::string> law_names() {
  std::vector<std::string> names{"test_sticky"};
  std::error_code ec;
  const fs::path laws = fs::path(PARDYN_SOURCE_DIR) / "potentials";
  if (!fs::is_directory(laws, ec)) return {"source_tree_missing"};  // the test says so
  for (const auto& e : fs::directory_iterator(laws))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  if (const char* path = std::getenv("PARDYN_PLUGIN_PATH"); path && *path)
    for (const auto& n : conformance_registry().names(PluginKind::Potential))
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

// A law of this tree (a built-in plugin, or a test plugin): it must come with analytic values.
bool in_tree(const std::string& name) {
  return name == "test_sticky" ||
         fs::is_directory(fs::path(PARDYN_SOURCE_DIR) / "potentials" / name);
}

class Conformance : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Conformance, Law) {
  const std::string name = GetParam();
  if (name == "source_tree_missing")
    FAIL() << "the source tree this test program was built from (" << PARDYN_SOURCE_DIR
           << ") is missing: the laws' reference values (tests/laws/) live there";
  const Registry& reg = conformance_registry();
  const FactoryInfo* info = reg.find(PluginKind::Potential, name);
  ASSERT_NE(info, nullptr) << "no plugin registers the potential " << name;

  conformance::Options o;
  conformance::Reference ref;
  const fs::path file = fs::path(PARDYN_SOURCE_DIR) / "tests" / "laws" / (name + ".csv");
  if (fs::exists(file)) {
    ref = conformance::read_reference(file.string());
    // A law that reads a file (table) names it from the source tree: @PARDYN_SOURCE_DIR@/...
    for (std::size_t at; (at = ref.params.find("@PARDYN_SOURCE_DIR@")) != std::string::npos;)
      ref.params.replace(at, 19, PARDYN_SOURCE_DIR);
    o.reference = &ref;
  }
  // A law without pair values may name the parameters to check it with (the walls: soft walls on).
  const fs::path params = fs::path(PARDYN_SOURCE_DIR) / "tests" / "laws" / (name + ".params");
  if (fs::exists(params)) {
    std::ifstream in(params);
    std::stringstream text;
    text << in.rdbuf();
    o.params = text.str();
  }
  const auto results = conformance::check_law(reg, name, o);
  std::cout << conformance::table(name, results);

  bool pair_law = false;
  for (const auto& r : results) {
    if (r.status == conformance::Status::Fail)
      ADD_FAILURE() << name << " " << r.check << " " << r.variant << ": " << r.detail;
    if (r.check == "make" && r.detail == "a pair law") pair_law = true;
  }
  if (pair_law && !o.reference && in_tree(name))
    ADD_FAILURE() << name << ": a pair law of this tree needs its analytic values in " << file
                  << " (tests/laws/make_reference.py)";
}

INSTANTIATE_TEST_SUITE_P(EveryLaw, Conformance, ::testing::ValuesIn(law_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The reference files are read strictly: a mistake in one is an error, not a silently empty check.
TEST(ConformanceReference, BadFilesAreClearErrors) {
  const fs::path dir = fs::path(std::getenv("PARDYN_TEST_TMP") ? std::getenv("PARDYN_TEST_TMP")
                                                               : "/tmp/pardyn-test") /
                       "conformance-reference";
  fs::create_directories(dir);
  const auto write = [&](const std::string& text) {
    const fs::path p = dir / "law.csv";
    std::ofstream(p) << text;
    return p.string();
  };
  EXPECT_THROW(conformance::read_reference(write("r,U\n1,2\n")), Error);
  EXPECT_THROW(conformance::read_reference(write("r,U,fdivr\n")), Error);
  EXPECT_THROW(conformance::read_reference(write("r,U,fdivr\n1;2;3\n")), Error);
  EXPECT_THROW(conformance::read_reference(write("# masses: 1\nr,U,fdivr\n1,2,3\n")), Error);
  const auto ok = conformance::read_reference(
      write("# law\n# params: G = 2; eps = 0.5\n# masses: 2 3\nr,U,fdivr\n1,-2,-4\n2,-1,-0.5\n"));
  EXPECT_EQ(ok.params, "G = 2\n eps = 0.5");
  EXPECT_EQ(ok.m0, 2);
  EXPECT_EQ(ok.rows.size(), 2u);
}

// A law whose values are wrong fails: the suite is not a rubber stamp.
TEST(ConformanceReference, WrongValuesFail) {
  conformance::Reference ref;
  ref.file = "wrong.csv";
  ref.params = "G = 1\neps = 0";
  ref.rows = {{1.0, -1.0, -1.0}, {2.0, -0.5, -0.1}};  // U right, fdivr wrong at r = 2 (-1/8)
  conformance::Options o;
  o.reference = &ref;
  o.gpu = false;
  const auto results = conformance::check_law(conformance_registry(), "gravity", o);
  bool analytic_failed = false;
  for (const auto& r : results)
    if (r.check == "analytic" && r.status == conformance::Status::Fail) analytic_failed = true;
  EXPECT_TRUE(analytic_failed) << conformance::table("gravity", results);
}

// The laws are listed without loading the plugins; this checks that the list misses none of the
// registry's.
TEST(ConformanceReference, EveryRegisteredLawIsInstantiated) {
  const auto listed = law_names();
  for (const auto& name : conformance_registry().names(PluginKind::Potential))
    EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end())
        << "the potential " << name << " has no Conformance.Law test (its folder under potentials/ "
        << "is not named after it?)";
}
