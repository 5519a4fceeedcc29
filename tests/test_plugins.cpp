// The plugin loader: what it accepts, what it refuses, and why.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "pardyn/backend.hpp"
#include "pardyn/config.hpp"
#include "pardyn/registry.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace pardyn;

namespace {

std::string staged(const std::string& name) { return test::staged_plugin(name); }

std::string refusal(Registry& reg) {
  return reg.refused().empty() ? std::string() : reg.refused().back().reason;
}

}  // namespace

TEST(PluginLoader, BuiltinPluginsLoadAndListTheirFactories) {
  Registry reg;
  reg.load_default();
  EXPECT_TRUE(reg.refused().empty()) << refusal(reg);
  EXPECT_NE(reg.find(PluginKind::Potential, "gravity"), nullptr);
  EXPECT_NE(reg.find(PluginKind::Scheme, "all_pairs"), nullptr);
  EXPECT_NE(reg.find(PluginKind::Integrator, "leapfrog"), nullptr);
  EXPECT_NE(reg.find(PluginKind::Integrator, "euler"), nullptr);
  const FactoryInfo* g = reg.find(PluginKind::Potential, "gravity");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->library.find("libpardyn_gravity.so"), std::string::npos);
  ASSERT_NE(g->schema.find("eps"), nullptr);
  EXPECT_EQ(g->schema.find("eps")->unit, "length");
}

TEST(PluginLoader, AcceptsAWellFormedOutOfTreePlugin) {
  Registry reg;
  reg.load_path(staged("good"));
  ASSERT_TRUE(reg.refused().empty()) << refusal(reg);
  EXPECT_NE(reg.find(PluginKind::Potential, "test_spring"), nullptr);
}

TEST(PluginLoader, RefusesALibraryWithoutDescriptor) {
  Registry reg;
  const std::string path = staged("no_descriptor");
  reg.load_path(path);
  ASSERT_EQ(reg.refused().size(), 1u);
  EXPECT_EQ(reg.refused()[0].path, fs::weakly_canonical(path).string());
  EXPECT_NE(refusal(reg).find("not a pardyn plugin"), std::string::npos) << refusal(reg);
}

TEST(PluginLoader, RefusesAbiBuildAndVersionMismatches) {
  for (auto [name, words] : {std::pair{"bad_abi", "plugin ABI version"},
                             std::pair{"bad_build", "compiler or C++ ABI differ"},
                             std::pair{"bad_version", "built for pardyn 0.0.0-other"}}) {
    Registry reg;
    reg.load_path(staged(name));
    ASSERT_EQ(reg.refused().size(), 1u) << name;
    EXPECT_NE(refusal(reg).find(words), std::string::npos) << name << ": " << refusal(reg);
    // Nothing but the framework's own factories (a fresh registry's).
    EXPECT_EQ(reg.list().size(), Registry().list().size()) << name;
  }
}

TEST(PluginLoader, RefusesADuplicateNameAndNamesBothFiles) {
  Registry reg;
  reg.load_default();
  reg.load_path(staged("duplicate"));
  ASSERT_EQ(reg.refused().size(), 1u);
  EXPECT_NE(refusal(reg).find("duplicate scheme 'all_pairs'"), std::string::npos) << refusal(reg);
  EXPECT_NE(refusal(reg).find("libpardyn_all_pairs.so"), std::string::npos) << refusal(reg);
  // the original stays usable
  EXPECT_EQ(reg.find(PluginKind::Scheme, "all_pairs")->summary.find("second"), std::string::npos);
}

TEST(PluginLoader, RefusesFilesAndFoldersWritableByOthers) {
  {
    Registry reg;
    const std::string path = staged("good");
    ::chmod(path.c_str(), 0777);
    reg.load_path(path);
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find("writable by others"), std::string::npos) << refusal(reg);
    EXPECT_NE(refusal(reg).find("chmod go-w"), std::string::npos);
  }
  {
    Registry reg;
    const std::string path = staged("good");
    const std::string dir = fs::path(path).parent_path().string();
    ::chmod(dir.c_str(), 0775);
    reg.load_path(dir);
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find("writable by its group"), std::string::npos) << refusal(reg);
    ::chmod(dir.c_str(), 0755);
  }
}

TEST(PluginLoader, ObjectsKeepTheirLibraryLoaded) {
  std::shared_ptr<Potential> pot;
  RunInfo run;
  {
    Registry reg;
    reg.load_path(staged("good"));
    ASSERT_TRUE(reg.refused().empty()) << refusal(reg);
    const FactoryInfo* info = reg.find(PluginKind::Potential, "test_spring");
    ASSERT_NE(info, nullptr);
    pot = reg.make_potential("test_spring", parse_params(info->schema, "k = 1", "test"), run);
  }  // the registry is gone; the object's code must still be loaded
  ASSERT_TRUE(pot);
  HostParticles hp(3);
  hp.resize(2);
  hp.x[0][1] = 2.0;
  hp.mass = {1.0, 1.0};
  ParticleStore s(3, Precision::Double, host_memory());
  s.upload(hp);
  ForceRequest req;
  req.box = &run.box;
  pot->compute(s, {NeighbourhoodKind::AllPairs, nullptr}, req);
  HostParticles out;
  s.download(out);
  EXPECT_DOUBLE_EQ(out.a[0][1], -2.0);  // F = -k d with d = x1 - x0 = 2
  EXPECT_DOUBLE_EQ(out.a[0][0], 2.0);
}
