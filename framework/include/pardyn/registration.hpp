// SPDX-License-Identifier: BSD-3-Clause
// Registration: how a plugin library tells the framework what it offers. Its register function
// receives a Registrar and adds a factory per plugin (FactoryInfo: kind, name, documentation, schema,
// supported dimensions, precisions and backends); the library exports a PluginDescriptor and a
// PluginStamp (PARDYN_PLUGIN, plugin_export.hpp) that the loader checks before it runs any of it.
//
// The binary contract (docs/plugins.md, "The binary contract"): one number, kPluginAbi, covers the
// whole SDK. A plugin of any kind passes the shared types (ParticleStore, RunInfo, BackendOps,
// Registrar, ParamSet) across the library boundary, so a change to any of them breaks every kind;
// and the loader reads the number from the file before it runs any of the plugin's code, when it
// does not yet know which kinds the library registers. Bump it whenever a class of the SDK headers
// changes layout or virtual functions; moving declarations between headers changes neither.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/registration.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "pardyn/core.hpp"
#include "pardyn/params.hpp"
#include "pardyn/run_info.hpp"
#include "pardyn/version.hpp"

namespace pardyn {

// The six kinds (potential.hpp, scheme.hpp, integrator.hpp, modifier.hpp, generator.hpp,
// observer.hpp): a plugin includes the headers of the kinds it registers.
class Potential;
class Scheme;
class Integrator;
class Modifier;
class Generator;
class Observer;

// Factories and the registry.
enum class PluginKind { Potential, Scheme, Integrator, Modifier, Generator, Observer };
const char* to_string(PluginKind k);

// The box a file gives, for `[box] from = "file"`: a generator that reads files offers the box of
// its format (FactoryInfo::file_box).
struct FileBox {
  std::string format;  // what the file is, for messages: "a LAMMPS data file"
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  // Whether the format says which axes are periodic (a dump's "pp ff mm", an XYZ's pbc); a LAMMPS
  // data file does not, and [box] boundary must then be given.
  bool has_boundary = false;
  Boundary boundary[3] = {Boundary::Open, Boundary::Open, Boundary::Open};
};
// Reads the box of the file `path` at frame `frame` (0 the first, -1 the last; a file of one state
// ignores it) for a run of `dim` dimensions. Returns false when the file is not of the generator's
// format (judged from its first lines, without an error); throws Error ("path:line: what is wrong")
// when it is but gives no box.
using FileBoxReader =
    std::function<bool(const std::string& path, std::int64_t frame, int dim, FileBox& out)>;

struct FactoryInfo {
  PluginKind kind = PluginKind::Potential;
  std::string name;     // what a user writes in TOML: type = "name"
  std::string summary;  // one line
  std::string doc;      // the formula, units and usage; printed by `pardyn plugins show`
  unsigned dims = kDimAll;
  unsigned precisions = kPrecisionAll;
  unsigned backends = kCpu;
  Schema schema;
  std::string library;     // set by the loader: the file the factory came from
  FileBoxReader file_box;  // generators that read a file: the box it gives (empty: none)
};

template <typename T>
using Factory = std::function<std::unique_ptr<T>(const ParamSet&, const RunInfo&)>;

// What a plugin's register function receives. Registration only records factories; objects are made
// after every plugin has loaded.
class Registrar {
 public:
  virtual ~Registrar() = default;
  virtual void add(FactoryInfo info, Factory<Potential> f) = 0;
  virtual void add(FactoryInfo info, Factory<Scheme> f) = 0;
  virtual void add(FactoryInfo info, Factory<Integrator> f) = 0;
  virtual void add(FactoryInfo info, Factory<Modifier> f) = 0;
  virtual void add(FactoryInfo info, Factory<Generator> f) = 0;
  virtual void add(FactoryInfo info, Factory<Observer> f) = 0;
};

// ---------------------------------------------------------------------------------------------------
// The binary contract (see the top of this file): one number for the whole SDK. Bump it whenever a
// class or constant of the SDK headers changes layout, virtual functions or meaning.
constexpr std::uint32_t kPluginAbi = 13;

struct PluginDescriptor {
  std::uint32_t abi;
  const char* pardyn_version;
  const char* build_id;  // compiler, its major version, and the C++ ABI
  int cuda_version;      // CUDA runtime version the plugin's device code was built with, 0 if none
  const char* cuda_archs;  // CUDA architectures compiled in, e.g. "80;90"; "" if none
  const char* name;
  void (*register_factories)(Registrar&);
};

// The same facts as plain bytes, which the loader reads from the file before it loads it (no code of a
// plugin runs before its file has been checked, docs/plugins.md): a record of fixed layout without
// pointers, in a section of its own (kStampSection), exported as `pardyn_plugin_stamp`.
struct PluginStamp {
  char magic[16];             // kStampMagic
  std::uint32_t abi;          // kPluginAbi
  std::int32_t cuda_version;  // as in PluginDescriptor
  char pardyn_version[32];
  char build_id[96];
  char cuda_archs[128];
  char name[64];
  std::uint32_t optimised;  // 1: its registration unit was compiled with optimisation (-O1 and up)
};
constexpr const char* kStampSection = ".pardyn_plugin";
constexpr const char* kStampMagic = "pardyn-plugin";

}  // namespace pardyn

// PARDYN_PLUGIN(fn), which exports a plugin's descriptor, is in pardyn/plugin_export.hpp: only a
// plugin's registration unit includes that (it brings in Boost.DLL). Without it the macro stops the
// compiler saying so.
#ifndef PARDYN_PLUGIN
#define PARDYN_PLUGIN(fn)                                                                    \
  static_assert(sizeof(&fn) == 0,                                                            \
                "PARDYN_PLUGIN needs #include \"pardyn/plugin_export.hpp\" in the plugin's " \
                "registration unit (the .cpp file that holds this macro)");
#endif
