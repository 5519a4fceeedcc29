#include "support.hpp"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "pardyn/config.hpp"

namespace pardyn::test {

Registry& registry() {
  static Registry* reg = [] {
    auto* r = new Registry;  // never destroyed: objects made in tests may outlive static teardown
    r->load_path(Registry::builtin_plugin_dir());
    r->throw_if_refused();
    return r;
  }();
  return *reg;
}

std::string scratch_dir(const std::string& name) {
  const char* base = std::getenv("PARDYN_TEST_TMP");
  // Prefixed with the running test, so that tests run in parallel (ctest -j) never share a folder.
  std::string prefix;
  if (const auto* t = ::testing::UnitTest::GetInstance()->current_test_info())
    prefix = std::string(t->test_suite_name()) + "." + t->name() + "-";
  std::filesystem::path p = std::filesystem::path(base ? base : "/tmp/pardyn-test") / (prefix + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

ParamSet params_for(PluginKind kind, const std::string& name, const std::string& overrides) {
  const FactoryInfo* info = registry().find(kind, name);
  if (!info) throw Error(std::string("test: no ") + to_string(kind) + " named " + name);
  Schema schema = info->schema;
  if (kind == PluginKind::Generator) schema.merge(particles_common_schema());
  return parse_params(schema, overrides, name);
}

std::string staged_plugin(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(Registry::builtin_plugin_dir()) / ".." / ".." / ".." / "tests" /
                       "plugins" / name / ("libpardyn_" + name + ".so");
  const std::string dir = scratch_dir("plugin-" + name);
  fs::permissions(dir, fs::perms(0755));
  const fs::path dst = fs::path(dir) / src.filename();
  fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
  fs::permissions(dst, fs::perms(0755));
  return dst.string();
}

}  // namespace pardyn::test
