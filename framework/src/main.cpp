// The pardyn command line: run, validate, plugins, version.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "pardyn/config.hpp"
#include "pardyn/simulation.hpp"

using namespace pardyn;

namespace {

Simulation* g_sim = nullptr;
void on_signal(int) {
  if (g_sim) g_sim->stop();
}

std::string kinds_text(unsigned bits, const char* a, const char* b) {
  std::string s;
  if (bits & 1u) s += a;
  if (bits & 2u) s += std::string(s.empty() ? "" : ", ") + b;
  return s;
}

void print_schema(const Schema& schema) {
  if (schema.specs().empty()) {
    std::cout << "  (no parameters)\n";
    return;
  }
  for (const auto& p : schema.specs()) {
    std::cout << "  " << p.name << " (" << to_string(p.type);
    if (!p.unit.empty() && p.unit != "1") std::cout << ", " << p.unit;
    std::cout << ")";
    if (p.default_value)
      std::cout << "  default " << format_value(*p.default_value);
    else
      std::cout << "  REQUIRED";
    if (p.min || p.max) {
      std::cout << "  range";
      if (p.min) std::cout << (p.min_exclusive ? " > " : " >= ") << *p.min;
      if (p.max) std::cout << " <= " << *p.max;
    }
    if (!p.choices.empty()) {
      std::cout << "  one of";
      for (const auto& c : p.choices) std::cout << " \"" << c << "\"";
    }
    std::cout << "\n      " << p.doc << "\n";
  }
}

int cmd_plugins(Registry& reg, const std::string& show) {
  if (!show.empty()) {
    bool found = false;
    for (const auto* f : reg.list()) {
      if (f->name != show) continue;
      found = true;
      std::cout << f->name << " — " << to_string(f->kind) << ": " << f->summary << "\n"
                << "library: " << f->library << "\n"
                << "dimensions: " << kinds_text(f->dims, "2", "3")
                << "; precisions: " << kinds_text(f->precisions, "float", "double")
                << "; backends: " << kinds_text(f->backends, "cpu", "cuda") << "\n\n"
                << f->doc << "\n\nparameters:\n";
      print_schema(f->schema);
      if (f->kind == PluginKind::Generator) {
        std::cout << "\nkeys every [[particles]] block takes as well:\n";
        print_schema(particles_common_schema());
      }
      std::cout << "\n";
    }
    if (show == "simulation" || show == "box") {
      found = true;
      std::cout << "[" << show << "] — framework section\n\nparameters:\n";
      print_schema(show == "simulation" ? simulation_schema() : box_schema());
    }
    if (!found) {
      std::vector<std::string> names;
      for (const auto* f : reg.list()) names.push_back(f->name);
      std::string near = nearest(show, names);
      std::cerr << "pardyn: no plugin named '" << show << "'"
                << (near.empty() ? "" : "; did you mean '" + near + "'?")
                << " (`pardyn plugins` lists them)\n";
      return 2;
    }
    return 0;
  }
  for (auto kind : {PluginKind::Potential, PluginKind::Scheme, PluginKind::Integrator,
                    PluginKind::Modifier, PluginKind::Generator, PluginKind::Observer}) {
    auto list = reg.list(kind);
    std::cout << to_string(kind) << "s:\n";
    if (list.empty()) std::cout << "  (none)\n";
    for (const auto* f : list) {
      std::printf("  %-16s %-7s %-13s %s\n", f->name.c_str(),
                  (kinds_text(f->dims, "2D", "3D")).c_str(),
                  kinds_text(f->backends, "cpu", "cuda").c_str(), f->summary.c_str());
    }
  }
  std::cout << "\nplugin libraries:\n";
  for (const auto& p : reg.plugins())
    std::cout << "  " << p.path << "  (" << p.build_id
              << (p.cuda_version ? ", CUDA archs " + p.cuda_archs : std::string()) << ")\n";
  if (!reg.refused().empty()) {
    std::cout << "\nrefused:\n";
    for (const auto& r : reg.refused()) std::cout << "  " << r.path << ": " << r.reason << "\n";
  }
  std::cout << "\n`pardyn plugins show NAME` prints a plugin's parameters and documentation.\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pardyn " PARDYN_VERSION_STRING
               " — plugin-based particle dynamics on CPUs and GPUs.\n"
               "Docs: docs/ in the source tree; `pardyn plugins` lists the force laws, schemes, "
               "integrators, generators and outputs."};
  app.require_subcommand(1);
  std::string file, show, output;
  std::vector<std::string> sets;
  bool quiet = false;

  auto* run = app.add_subcommand("run", "run a scenario (TOML file)");
  run->add_option("file", file, "scenario file")->required();
  run->add_option("--set", sets, "override a key: section.key=value (repeatable)");
  run->add_option("--output,-o", output, "output folder (overrides [simulation] output)");
  run->add_flag("--quiet,-q", quiet, "no progress bar and no thermo lines");

  auto* validate = app.add_subcommand("validate", "check a scenario without running it");
  validate->add_option("file", file, "scenario file")->required();
  validate->add_option("--set", sets, "override a key: section.key=value (repeatable)");

  auto* plugins = app.add_subcommand("plugins", "list the plugins, or `plugins show NAME`");
  auto* show_cmd = plugins->add_subcommand("show", "print a plugin's parameters and documentation");
  show_cmd->add_option("name", show, "plugin name (or 'simulation', 'box')")->required();

  auto* version = app.add_subcommand("version", "print version and build information");

  CLI11_PARSE(app, argc, argv);

  try {
    Registry registry;
    registry.load_default();
    if (*version) {
      std::cout << "pardyn " << PARDYN_VERSION_STRING << " (" << Registry::build_id() << ")\n"
                << "plugins: " << Registry::builtin_plugin_dir() << "\n";
      return 0;
    }
    if (*plugins) return cmd_plugins(registry, show);
    registry.throw_if_refused();
    Scenario sc = load_scenario(file, sets, registry);
    if (*validate) {
      std::cout << file << ": valid (" << sc.particles.size() << " particle block(s), "
                << sc.potentials.size() << " potential(s), integrator " << sc.integrator.type
                << ", " << sc.steps << " steps, " << sc.dim << "D " << to_string(sc.precision)
                << ")\n";
      return 0;
    }
    RunOptions opt;
    opt.quiet = quiet;
    opt.output = output;
    Simulation sim(sc, registry, opt);
    g_sim = &sim;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    sim.run();
    g_sim = nullptr;
    if (!quiet) {
      std::printf("done: %llu steps, %.4g steps/s, %llu force evaluations\n",
                  (unsigned long long)sim.steps_done(), sim.steps_per_second(),
                  (unsigned long long)sim.force_evaluations());
      std::printf("output: %s\n  run.pvd     frames for ParaView:  paraview %s/run.pvd\n"
                  "  thermo.csv  energies, momentum, temperature per observation\n"
                  "  config.toml the resolved configuration\n",
                  sim.output_dir().c_str(), sim.output_dir().c_str());
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "pardyn: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pardyn: internal error: %s\n", e.what());
    return 3;
  }
}
