// SPDX-License-Identifier: BSD-3-Clause
// The registry of plugin factories and the plugin loader (Boost.DLL).
//
// The registry owns the loaded libraries. Every object it makes holds a reference to its library, so a
// library stays loaded for as long as anything made from it exists (Boost.DLL does not do this itself).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "pardyn/plugin.hpp"

namespace boost::dll {
class shared_library;
}

namespace pardyn {

struct LoadedPlugin {
  std::string path;
  std::string name;
  std::string pardyn_version;
  std::string build_id;
  int cuda_version = 0;
  std::string cuda_archs;
  std::vector<std::string> factories;  // "kind name"
  bool optimised = true;  // compiled with optimisation (its stamp says so); else it runs slowly
};

struct RefusedPlugin {
  std::string path;
  std::string reason;
  // What it would have registered, where that is known (a duplicate: "kind name" of its factories).
  // A refused file whose contents are unknown (it was not loaded) has none.
  std::vector<std::pair<int, std::string>> provides;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The folder of the built-in plugins: lib/pardyn/plugins beside the lib/ that holds libpardyn
  // (else beside the running executable's folder).
  static std::string builtin_plugin_dir();
  // The build id of the framework itself, which every plugin must match.
  static std::string build_id();

  // Loads the built-in folder, then every folder in $PARDYN_PLUGIN_PATH (':'-separated).
  void load_default();
  // Loads every shared library (*.so) in a folder, or one file.
  void load_path(const std::string& path);
  // Registers factories from code linked into the running program (tests, embedding applications).
  void add_in_process(void (*register_fn)(Registrar&), const std::string& origin);

  // Refused plugins, with the reasons. A refused file stops only what needs it (see needs()).
  const std::vector<RefusedPlugin>& refused() const { return refused_; }
  void throw_if_refused() const;
  // For the message about a factory that is not there: the refused files, which may have provided
  // it ("" when none was refused).
  std::string refused_hint() const;
  // A refused file known to provide `name` of `kind` too (a duplicate), or null.
  const RefusedPlugin* refused_provider(PluginKind kind, const std::string& name) const;
  // Refusals as lines "\n  path: reason", from refusal `first` on.
  std::string refusals_text(std::size_t first = 0) const;
  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }
  // Notes, not refusals: the loaded plugins built without optimisation, one line each ("" for
  // none). When pardyn itself was built so, one line for it and its plugins together.
  std::vector<std::string> notes() const;
  // The note for the library at `path` (a loaded plugin built without optimisation), or "".
  std::string note_for(const std::string& path) const;

  const FactoryInfo* find(PluginKind kind, const std::string& name) const;
  // Every factory of a kind (all kinds if none is given), sorted by name.
  std::vector<const FactoryInfo*> list() const;
  std::vector<const FactoryInfo*> list(PluginKind kind) const;
  // The names of a kind, for "did you mean" hints.
  std::vector<std::string> names(PluginKind kind) const;

  std::shared_ptr<Potential> make_potential(const std::string& n, const ParamSet& p,
                                            const RunInfo& r) const;
  std::shared_ptr<Scheme> make_scheme(const std::string& n, const ParamSet& p,
                                      const RunInfo& r) const;
  std::shared_ptr<Integrator> make_integrator(const std::string& n, const ParamSet& p,
                                              const RunInfo& r) const;
  std::shared_ptr<Modifier> make_modifier(const std::string& n, const ParamSet& p,
                                          const RunInfo& r) const;
  std::shared_ptr<Generator> make_generator(const std::string& n, const ParamSet& p,
                                            const RunInfo& r) const;
  std::shared_ptr<Observer> make_observer(const std::string& n, const ParamSet& p,
                                          const RunInfo& r) const;

  using AnyFactory = std::variant<Factory<Potential>, Factory<Scheme>, Factory<Integrator>,
                                  Factory<Modifier>, Factory<Generator>, Factory<Observer>>;
  struct Entry {
    FactoryInfo info;
    AnyFactory factory;
    std::shared_ptr<boost::dll::shared_library> library;  // null for in-process factories
    int cuda_version = 0;                                 // of the library's GPU code (0: none)
    std::string cuda_archs;                               // the architectures it was compiled for
  };

 private:
  void load_file(const std::string& path);
  void commit(std::vector<Entry> entries, const std::string& origin);
  template <class T>
  std::shared_ptr<T> make(PluginKind kind, const std::string& n, const ParamSet& p,
                          const RunInfo& r) const;

  // Declared first so they are destroyed last: the libraries outlive every factory.
  std::vector<std::shared_ptr<boost::dll::shared_library>> libraries_;
  std::map<std::pair<int, std::string>, Entry> entries_;
  std::vector<LoadedPlugin> plugins_;
  std::vector<RefusedPlugin> refused_;
};

}  // namespace pardyn
