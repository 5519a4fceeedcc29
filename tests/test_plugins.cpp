// SPDX-License-Identifier: BSD-3-Clause
// The plugin loader: what it accepts, what it refuses, and why.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "support.hpp"
#include "loader/plugin_file.hpp"

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

// A plugin built without optimisation loads, and the loader notes it (a slow plugin is legal).
TEST(PluginLoader, NotesAPluginBuiltWithoutOptimisation) {
  Registry fast;
  fast.load_path(staged("good"));
  ASSERT_TRUE(fast.refused().empty()) << refusal(fast);
  EXPECT_TRUE(fast.notes().empty()) << fast.notes()[0];
  EXPECT_TRUE(plugin_file::inspect(staged("good")).stamp.optimised);

  Registry slow;
  const std::string path = staged("unoptimised");
  EXPECT_FALSE(plugin_file::inspect(path).stamp.optimised);
  slow.load_path(path);
  ASSERT_TRUE(slow.refused().empty()) << refusal(slow);
  EXPECT_NE(slow.find(PluginKind::Potential, "test_spring"), nullptr);
  ASSERT_EQ(slow.notes().size(), 1u);
  const std::string note = slow.notes()[0];
  EXPECT_NE(note.find(fs::canonical(path).string()), std::string::npos) << note;
  EXPECT_NE(note.find("without optimisation"), std::string::npos) << note;
  EXPECT_NE(note.find("-DCMAKE_BUILD_TYPE=Release"), std::string::npos) << note;
  EXPECT_EQ(slow.note_for(fs::canonical(path).string()), note);
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

// --- Checks made before a plugin's code runs (docs/plugins.md) --------------------------------------

namespace {

// A copy of the test plugin "good" at dir/name, with mode 0755.
std::string copy_good(const fs::path& dir, const std::string& name = "libpardyn_good.so") {
  fs::create_directories(dir);
  const fs::path dst = dir / name;
  fs::copy_file(staged("good"), dst, fs::copy_options::overwrite_existing);
  fs::permissions(dst, fs::perms(0755));
  return dst.string();
}

}  // namespace

// A truncated copy (what an interrupted copy or a full disk leaves) used to crash every command in
// the dynamic loader (SIGBUS); it is refused as incomplete, naming the file, and never loaded.
TEST(PluginLoader, RefusesATruncatedLibraryBeforeLoadingIt) {
  const std::string good = staged("good");
  const auto size = fs::file_size(good);
  const fs::path dir = test::scratch_dir("cut");
  fs::permissions(dir, fs::perms(0755));
  for (int fraction : {2, 3, 10}) {
    const fs::path cut = dir / ("libpardyn_cut" + std::to_string(fraction) + ".so");
    fs::copy_file(good, cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut, size / fraction);
    Registry reg;
    reg.load_path(cut.string());
    ASSERT_EQ(reg.refused().size(), 1u) << fraction;
    EXPECT_EQ(reg.refused()[0].path, cut.string());
    EXPECT_NE(refusal(reg).find("incomplete"), std::string::npos) << refusal(reg);
    EXPECT_NE(refusal(reg).find("the file has " + std::to_string(size / fraction) + " bytes"),
              std::string::npos)
        << refusal(reg);
    EXPECT_EQ(reg.find(PluginKind::Potential, "test_spring"), nullptr);
  }
  // Not an ELF file at all, and an empty one.
  for (const std::string& junk : {std::string("#!/bin/sh\necho hello\n"), std::string()}) {
    const fs::path f = dir / "libpardyn_junk.so";
    std::FILE* out = std::fopen(f.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fwrite(junk.data(), 1, junk.size(), out);
    std::fclose(out);
    Registry reg;
    reg.load_path(f.string());
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find("is not a shared library"), std::string::npos) << refusal(reg);
  }
}

// Every folder above the plugin counts: a world-writable one lets anyone swap the plugin's folder.
// A sticky folder (/tmp) above the plugin's own folder does not, as only an entry's owner may
// rename it there; as the plugin's own folder it is refused.
TEST(PluginLoader, ChecksEveryFolderUpToTheRoot) {
  const fs::path base = test::scratch_dir("chain");
  fs::permissions(base, fs::perms(0755));
  const fs::path outer = base / "outer";
  const fs::path inner = outer / "plugins";
  const std::string plugin = copy_good(inner);
  fs::permissions(outer, fs::perms(0755));
  fs::permissions(inner, fs::perms(0755));
  {
    Registry reg;
    reg.load_path(inner.string());
    EXPECT_TRUE(reg.refused().empty()) << refusal(reg);
    EXPECT_NE(reg.find(PluginKind::Potential, "test_spring"), nullptr);
  }
  ::chmod(outer.c_str(), 0777);
  for (const std::string& path : {inner.string(), plugin}) {
    Registry reg;
    reg.load_path(path);
    ASSERT_EQ(reg.refused().size(), 1u) << path;
    EXPECT_NE(
        refusal(reg).find("its folder " + outer.string() + " is writable by others (mode 777)"),
        std::string::npos)
        << refusal(reg);
    EXPECT_NE(refusal(reg).find("chmod go-w " + outer.string()), std::string::npos) << refusal(reg);
    EXPECT_EQ(reg.find(PluginKind::Potential, "test_spring"), nullptr);
  }
  ::chmod(outer.c_str(), 01777);  // like /tmp
  {
    Registry reg;
    reg.load_path(inner.string());
    EXPECT_TRUE(reg.refused().empty()) << refusal(reg);
  }
  ::chmod(outer.c_str(), 0755);
  ::chmod(inner.c_str(), 01777);  // the plugin's own folder: anyone may add a library there
  {
    Registry reg;
    reg.load_path(plugin);
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find("its folder " + inner.string() + " is writable by others"),
              std::string::npos)
        << refusal(reg);
  }
  ::chmod(inner.c_str(), 0755);
}

// Files and folders owned by another user (not root) are refused: that user could replace them.
TEST(PluginLoader, RefusesWhatAnotherUserOwns) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a file owned by another user needs root";
  const fs::path base = test::scratch_dir("owner");
  fs::permissions(base, fs::perms(0755));
  const fs::path dir = base / "plugins";
  const std::string plugin = copy_good(dir);
  fs::permissions(dir, fs::perms(0755));
  ASSERT_EQ(::chown(plugin.c_str(), 65534, 65534), 0);
  {
    Registry reg;
    reg.load_path(plugin);
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find(plugin + " is owned by "), std::string::npos) << refusal(reg);
    EXPECT_NE(refusal(reg).find("uid 65534"), std::string::npos) << refusal(reg);
  }
  ASSERT_EQ(::chown(plugin.c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  {
    Registry reg;
    reg.load_path(dir.string());
    ASSERT_EQ(reg.refused().size(), 1u);
    EXPECT_NE(refusal(reg).find(dir.string() + " is owned by "), std::string::npos) << refusal(reg);
  }
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
}

// A symbolic link loop, or a link to nothing, among a folder's libraries is refused naming the link;
// the other plugins of the folder load.
TEST(PluginLoader, RefusesSymlinkLoopsNamingTheLink) {
  const fs::path dir = test::scratch_dir("loop");
  fs::permissions(dir, fs::perms(0755));
  copy_good(dir);
  fs::create_symlink("libpardyn_loop.so", dir / "libpardyn_loop.so");
  fs::create_symlink("libpardyn_a.so", dir / "libpardyn_b.so");
  fs::create_symlink("libpardyn_b.so", dir / "libpardyn_a.so");
  fs::create_symlink("nowhere.so", dir / "libpardyn_dangling.so");
  Registry reg;
  reg.load_path(dir.string());
  EXPECT_NE(reg.find(PluginKind::Potential, "test_spring"), nullptr);
  ASSERT_EQ(reg.refused().size(), 4u);
  std::set<std::string> paths;
  for (const auto& r : reg.refused()) {
    paths.insert(r.path);
    EXPECT_TRUE(r.reason.find("symbolic link loop") != std::string::npos ||
                r.reason.find("symbolic link to nowhere.so, which does not exist") !=
                    std::string::npos)
        << r.path << ": " << r.reason;
  }
  EXPECT_EQ(paths.count((dir / "libpardyn_loop.so").string()), 1u);
  EXPECT_EQ(paths.count((dir / "libpardyn_dangling.so").string()), 1u);
  // Named directly ($PARDYN_PLUGIN_PATH, plugin_paths): the same.
  Registry direct;
  direct.load_path((dir / "libpardyn_loop.so").string());
  ASSERT_EQ(direct.refused().size(), 1u);
  EXPECT_NE(refusal(direct).find("symbolic link loop"), std::string::npos) << refusal(direct);
}

// A plugin in its stamp and in its descriptor: the stamp is what the loader reads from the file.
TEST(PluginLoader, ReadsTheStampWithoutLoading) {
  const plugin_file::Inspection look = plugin_file::inspect(staged("good"));
  ASSERT_EQ(look.problem, "");
  EXPECT_STREQ(look.stamp.magic, kStampMagic);
  EXPECT_EQ(look.stamp.abi, kPluginAbi);
  EXPECT_STREQ(look.stamp.name, "test_good");
  EXPECT_STREQ(look.stamp.build_id, Registry::build_id().c_str());
  const plugin_file::Inspection none = plugin_file::inspect(staged("no_descriptor"));
  EXPECT_NE(none.problem.find("no pardyn stamp"), std::string::npos) << none.problem;
}
