// SPDX-License-Identifier: BSD-3-Clause
#include "support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"

namespace pardyn::test {

Box cube(int dim, double lo, double hi, Boundary b) {
  Box box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = lo, box.hi[d] = hi;
    box.boundary[d] = d < dim ? b : Boundary::Open;
  }
  return box;
}

ScenarioRun run_scenario(const std::string& dir, const std::string& toml, const std::string& resume,
                         const std::vector<std::string>& set) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/scenario.toml";
  if (!toml.empty()) std::ofstream(path) << toml;
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Scenario sc;
  if (resume.empty()) {
    sc = load_scenario(path, set, registry());
  } else {
    Resume r = prepare_resume(resume, toml.empty() ? "" : path, set, registry(), false);
    sc = std::move(r.scenario);
    opt.resume = r.data;
    opt.resume_file = r.file;
    opt.output = r.output_dir;
  }
  Simulation sim(sc, registry(), opt);
  sim.run();
  ScenarioRun out;
  sim.store().download(out.particles);
  out.output = opt.output;
  out.steps = sim.steps_done();
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

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
  std::filesystem::path p =
      std::filesystem::path(base ? base : "/tmp/pardyn-test") / (prefix + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

int Table::col(const std::string& name) const {
  for (std::size_t k = 0; k < head.size(); ++k)
    if (head[k] == name) return int(k);
  ADD_FAILURE() << "no column " << name;
  return 0;
}

Table read_table(const std::string& path) {
  Table t;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::string line;
  while (std::getline(f, line) && !line.empty() && line[0] == '#') {}
  if (line.empty()) return t;
  std::stringstream hs(line);
  for (std::string h; std::getline(hs, h, ',');) t.head.push_back(h);
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<double> row;
    std::stringstream ls(line);
    for (std::string v; std::getline(ls, v, ',');) row.push_back(std::strtod(v.c_str(), nullptr));
    t.rows.push_back(row);
  }
  return t;
}

std::string data_file(const std::string& name) {
  return (std::filesystem::path(PARDYN_SOURCE_DIR) / "tests" / "data" / name).string();
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

namespace {

struct ProbeState {
  std::function<void(const ObserveContext&)> record;
  unsigned fields = 0;
  bool seen = false;
  std::uint64_t last_step = 0;
};
ProbeState* g_probe = nullptr;  // the scope of the run in progress (tests run one at a time)

class Probe final : public Observer {
 public:
  explicit Probe(std::uint64_t interval) : interval_(interval) {}
  std::uint64_t interval() const override { return interval_; }
  unsigned fields() const override { return g_probe ? g_probe->fields : 0u; }
  void observe(const ObserveContext& ctx) override {
    if (!g_probe) return;
    // The final step can coincide with a regular observation: one call per step.
    if (g_probe->seen && g_probe->last_step == ctx.step && ctx.step != 0) return;
    g_probe->seen = true;
    g_probe->last_step = ctx.step;
    g_probe->record(ctx);
  }

 private:
  std::uint64_t interval_;
};

void register_probe(Registrar& r) {
  FactoryInfo f;
  f.name = "probe";
  f.summary = "test observer: hands every observation to the test's callback";
  f.backends = kCpu | kCuda;
  f.schema.integer("interval", 1, "observe every this many steps", 1);
  r.add(std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Observer>(new Probe(std::uint64_t(p.integer("interval"))));
        }));
}

}  // namespace

Registry& probe_registry() {
  static Registry* reg = [] {
    auto* r = new Registry;  // never destroyed, like registry()
    r->load_path(Registry::builtin_plugin_dir());
    r->add_in_process(&register_probe, "tests/support.cpp");
    r->throw_if_refused();
    return r;
  }();
  return *reg;
}

ProbeScope::ProbeScope(std::function<void(const ObserveContext&)> record, unsigned fields) {
  g_probe = new ProbeState{std::move(record), fields};
}
ProbeScope::~ProbeScope() {
  delete g_probe;
  g_probe = nullptr;
}

}  // namespace pardyn::test
