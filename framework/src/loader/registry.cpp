// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/app/registry.hpp"

#include "pardyn/app/cuda.hpp"
#include "io/checkpoint_output.hpp"
#include "plugin_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace pardyn {

const char* to_string(PluginKind k) {
  switch (k) {
    case PluginKind::Potential: return "potential";
    case PluginKind::Scheme: return "scheme";
    case PluginKind::Integrator: return "integrator";
    case PluginKind::Modifier: return "modifier";
    case PluginKind::Generator: return "generator";
    case PluginKind::Observer: return "observer";
  }
  return "?";
}

namespace {

// Collects a plugin's factories until every check has passed.
class Staging final : public Registrar {
 public:
  explicit Staging(std::shared_ptr<boost::dll::shared_library> lib, std::string origin)
      : lib_(std::move(lib)), origin_(std::move(origin)) {}
  void add(FactoryInfo i, Factory<Potential> f) override { put(PluginKind::Potential, i, f); }
  void add(FactoryInfo i, Factory<Scheme> f) override { put(PluginKind::Scheme, i, f); }
  void add(FactoryInfo i, Factory<Integrator> f) override { put(PluginKind::Integrator, i, f); }
  void add(FactoryInfo i, Factory<Modifier> f) override { put(PluginKind::Modifier, i, f); }
  void add(FactoryInfo i, Factory<Generator> f) override { put(PluginKind::Generator, i, f); }
  void add(FactoryInfo i, Factory<Observer> f) override { put(PluginKind::Observer, i, f); }
  std::vector<Registry::Entry> entries;

 private:
  template <class F>
  void put(PluginKind kind, FactoryInfo& info, F& f) {
    info.kind = kind;
    info.library = origin_;
    entries.push_back(
        Registry::Entry{std::move(info), Registry::AnyFactory(std::move(f)), lib_, 0, ""});
  }
  std::shared_ptr<boost::dll::shared_library> lib_;
  std::string origin_;
};

std::string major_cuda(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

// The framework's own outputs (the checkpoint output) are there from the start.
Registry::Registry() { add_in_process(register_builtin_outputs, "pardyn (built in)"); }

Registry::~Registry() {
  // Factories (std::function objects whose code lives in the libraries) go before the libraries.
  entries_.clear();
}

std::string Registry::build_id() { return PARDYN_BUILD_ID; }

std::string Registry::builtin_plugin_dir() {
  // Beside libpardyn itself (<prefix>/lib/libpardyn.so -> <prefix>/lib/pardyn/plugins), which holds
  // for every program that links it, the Python interpreter included; else beside the program.
  std::error_code ec;
  auto folder = [&](const fs::path& binary) {
    fs::path dir = binary.parent_path() / ".." / PARDYN_PLUGIN_SUBDIR;
    fs::path c = fs::weakly_canonical(dir, ec);
    return ec ? dir : c;
  };
  const fs::path lib = folder(boost::dll::this_line_location().native());
  if (fs::is_directory(lib, ec)) return lib.string();
  return folder(boost::dll::program_location().native()).string();
}

void Registry::load_default() {
  load_path(builtin_plugin_dir());
  if (const char* env = std::getenv("PARDYN_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) load_path(item);
  }
}

namespace {

// Why a path cannot be looked at ("" if it can): a symbolic link loop, a link to nothing.
std::string unreachable(const fs::path& p) {
  std::error_code ec;
  (void)fs::status(p, ec);
  if (!ec) return "";
  if (ec.value() == ELOOP)
    return "is a symbolic link loop (following it leads back to it); remove it or point it at a "
           "plugin file";
  std::error_code lec;
  if (fs::is_symlink(fs::symlink_status(p, lec)) && ec.value() == ENOENT) {
    std::error_code rec;
    const fs::path to = fs::read_symlink(p, rec);
    return "is a symbolic link to " +
           (rec ? std::string("a missing file") : to.string() + ", which does not exist") +
           "; remove it or point it at a plugin file";
  }
  if (ec.value() == ENOENT) return "no such file or folder";
  return "cannot be read: " + ec.message();
}

}  // namespace

void Registry::load_path(const std::string& path) {
  if (const std::string why = unreachable(path); !why.empty()) {
    refused_.push_back({path, why, {}});
    return;
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const std::string folder = fs::canonical(path, ec).string();
    if (ec) {
      refused_.push_back({path, "plugin folder refused: cannot be resolved: " + ec.message(), {}});
      return;
    }
    if (const std::string why = plugin_file::untrusted(folder, folder); !why.empty()) {
      refused_.push_back({path, "plugin folder refused: " + why, {}});
      return;
    }
    std::vector<std::string> files;
    fs::directory_iterator it(folder, ec), end;
    if (ec) {
      refused_.push_back({path, "plugin folder cannot be listed: " + ec.message(), {}});
      return;
    }
    for (; it != end; it.increment(ec)) {
      if (ec) {
        refused_.push_back({path, "plugin folder cannot be listed: " + ec.message(), {}});
        break;
      }
      const std::string name = it->path().filename().string();
      if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
      // Only *.so is a plugin; a link among them that leads nowhere is reported, naming the link.
      if (const std::string why = unreachable(it->path()); !why.empty()) {
        refused_.push_back({it->path().string(), why, {}});
        continue;
      }
      std::error_code fec;
      if (fs::is_regular_file(it->path(), fec)) files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) load_file(f);
  } else {
    load_file(path);
  }
}

// Long: the checks before a library is trusted, in the order they must run (none of it runs first).
void Registry::load_file(const std::string& path) {
  std::error_code ec;
  const std::string canonical = fs::canonical(path, ec).string();
  if (ec) {
    const std::string why = unreachable(path);
    refused_.push_back({path, why.empty() ? "cannot be resolved: " + ec.message() : why, {}});
    return;
  }
  for (const auto& p : plugins_)
    if (p.path == canonical) return;  // the same file reached twice (e.g. built-in dir in the path)
  for (const auto& r : refused_)
    if (r.path == canonical) return;  // refused once already
  auto refuse = [&](const std::string& why) { refused_.push_back({canonical, why, {}}); };

  // Nothing of the file runs before these checks: who may change it, then its headers and stamp,
  // read from the file (plugin_file.hpp).
  const std::string own_folder = fs::path(canonical).parent_path().string();
  if (const std::string why = plugin_file::untrusted(canonical, own_folder); !why.empty())
    return refuse(why);
  const plugin_file::Inspection look = plugin_file::inspect(canonical);
  if (!look.problem.empty()) return refuse(look.problem);
  const PluginStamp& stamp = look.stamp;
  if (stamp.abi != kPluginAbi)
    return refuse("plugin ABI version " + std::to_string(stamp.abi) + ", this pardyn needs " +
                  std::to_string(kPluginAbi) + "; rebuild the plugin against this pardyn");
  if (std::string(stamp.pardyn_version) != PARDYN_VERSION_STRING)
    return refuse(std::string("built for pardyn ") + stamp.pardyn_version + ", this is pardyn " +
                  PARDYN_VERSION_STRING + "; rebuild the plugin against this pardyn");
  if (std::string(stamp.build_id) != build_id())
    return refuse(std::string("built with '") + stamp.build_id + "', pardyn with '" + build_id() +
                  "' (compiler or C++ ABI differ); rebuild the plugin with the same compiler");
#if defined(PARDYN_CORE_CUDA_VERSION)
  if (stamp.cuda_version != 0 && stamp.cuda_version / 1000 != PARDYN_CORE_CUDA_VERSION / 1000)
    return refuse("its GPU code was built with CUDA " + major_cuda(stamp.cuda_version) +
                  ", pardyn with CUDA " + major_cuda(PARDYN_CORE_CUDA_VERSION) +
                  "; rebuild the plugin with the same CUDA toolkit");
#else
  if (stamp.cuda_version != 0)
    return refuse("it contains GPU code (CUDA " + major_cuda(stamp.cuda_version) +
                  ") but this pardyn was built without CUDA; rebuild one of them");
#endif

  auto lib = std::make_shared<boost::dll::shared_library>();
  try {
    lib->load(canonical, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return refuse(std::string("cannot be loaded: ") + e.what());
  }
  if (!lib->has(plugin_file::kDescriptorSymbol))
    return refuse(
        std::string("not a pardyn plugin: it exports no '") + plugin_file::kDescriptorSymbol +
        "' (a plugin ends with PARDYN_PLUGIN(register_fn) or PARDYN_PAIR_POTENTIAL_PLUGIN)");
  const PluginDescriptor* d = nullptr;
  try {
    d = lib->get_alias<const PluginDescriptor*()>(plugin_file::kDescriptorSymbol)();
  } catch (const std::exception& e) {
    return refuse(std::string("descriptor cannot be read: ") + e.what());
  }
  if (!d) return refuse("its descriptor is null");
  // The stamp passed the version checks above; the descriptor must say the same.
  if (d->abi != stamp.abi || std::string(d->pardyn_version) != stamp.pardyn_version ||
      std::string(d->build_id) != stamp.build_id || d->cuda_version != stamp.cuda_version ||
      std::string(d->cuda_archs) != stamp.cuda_archs || std::string(d->name) != stamp.name)
    return refuse(
        "its descriptor and its stamp differ (a plugin writes both with one "
        "PARDYN_PLUGIN); rebuild it against this pardyn");
  Staging staging(lib, canonical);
  try {
    d->register_factories(staging);
  } catch (const std::exception& e) {
    return refuse(std::string("its register function failed: ") + e.what());
  }
  for (auto& e : staging.entries) {
    e.cuda_version = d->cuda_version;
    e.cuda_archs = d->cuda_archs;
  }
  LoadedPlugin info{canonical,     d->name, d->pardyn_version,   d->build_id, d->cuda_version,
                    d->cuda_archs, {},      stamp.optimised != 0};
  std::vector<std::pair<int, std::string>> provides;
  for (const auto& e : staging.entries) {
    info.factories.push_back(std::string(to_string(e.info.kind)) + " " + e.info.name);
    provides.emplace_back(int(e.info.kind), e.info.name);
  }
  try {
    commit(std::move(staging.entries), canonical);
  } catch (const Error& e) {
    refused_.push_back({canonical, e.what(), std::move(provides)});
    return;
  }
  libraries_.push_back(lib);
  plugins_.push_back(std::move(info));
}

void Registry::add_in_process(void (*register_fn)(Registrar&), const std::string& origin) {
  Staging staging(nullptr, origin);
  register_fn(staging);
  commit(std::move(staging.entries), origin);
  LoadedPlugin info{origin, origin, PARDYN_VERSION_STRING, build_id(), 0, "", {}};
  plugins_.push_back(std::move(info));
}

void Registry::commit(std::vector<Entry> entries, const std::string& origin) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const auto key = std::make_pair(int(e.info.kind), e.info.name);
    if (e.info.name.empty())
      throw Error("registers a " + std::string(to_string(e.info.kind)) + " without a name");
    auto it = entries_.find(key);
    if (it != entries_.end())
      throw Error(std::string("duplicate ") + to_string(e.info.kind) + " '" + e.info.name +
                  "': already provided by " + it->second.info.library +
                  "; remove one of the two or rename it");
    for (std::size_t j = 0; j < i; ++j)
      if (entries[j].info.kind == e.info.kind && entries[j].info.name == e.info.name)
        throw Error(std::string("registers ") + to_string(e.info.kind) + " '" + e.info.name +
                    "' twice");
  }
  (void)origin;
  for (auto& e : entries) {
    const auto key = std::make_pair(int(e.info.kind), e.info.name);
    entries_.emplace(key, std::move(e));
  }
}

namespace {
#if defined(__OPTIMIZE__)
constexpr bool kCoreOptimised = true;
#else
constexpr bool kCoreOptimised = false;
#endif
std::string unoptimised_note(const std::string& path) {
  return "plugin " + path +
         " was built without optimisation (no -O): its loops run several times slower; rebuild "
         "it with -DCMAKE_BUILD_TYPE=Release (docs/plugins.md, \"Build it optimised\")";
}
}  // namespace

std::vector<std::string> Registry::notes() const {
  std::vector<std::string> slow;
  for (const auto& p : plugins_)
    if (!p.optimised) slow.push_back(p.path);
  if (slow.empty()) return {};
  if (!kCoreOptimised)
    return {"this pardyn and " + std::to_string(slow.size()) +
            " of its plugins were built without optimisation (no -O, a Debug build): runs are "
            "several times slower; build with scripts/build (Release) for production runs"};
  std::vector<std::string> out;
  for (const auto& p : slow) out.push_back(unoptimised_note(p));
  return out;
}

std::string Registry::note_for(const std::string& path) const {
  for (const auto& p : plugins_)
    if (p.path == path && !p.optimised) return unoptimised_note(p.path);
  return "";
}

void Registry::throw_if_refused() const {
  if (refused_.empty()) return;
  throw Error("plugin loading refused " + std::to_string(refused_.size()) +
              " file(s):" + refusals_text());
}

std::string Registry::refusals_text(std::size_t first) const {
  std::string out;
  for (std::size_t i = first; i < refused_.size(); ++i)
    out += "\n  " + refused_[i].path + ": " + refused_[i].reason;
  return out;
}

std::string Registry::refused_hint() const {
  if (refused_.empty()) return "";
  return "\nthese plugin files were refused and may be the one that provides it (fix or remove "
         "them):" +
         refusals_text();
}

const RefusedPlugin* Registry::refused_provider(PluginKind kind, const std::string& name) const {
  for (const auto& r : refused_)
    for (const auto& [k, n] : r.provides)
      if (k == int(kind) && n == name) return &r;
  return nullptr;
}

const FactoryInfo* Registry::find(PluginKind kind, const std::string& name) const {
  auto it = entries_.find(std::make_pair(int(kind), name));
  return it == entries_.end() ? nullptr : &it->second.info;
}

std::vector<const FactoryInfo*> Registry::list() const {
  std::vector<const FactoryInfo*> out;
  for (const auto& [k, e] : entries_) out.push_back(&e.info);
  return out;
}

std::vector<const FactoryInfo*> Registry::list(PluginKind kind) const {
  std::vector<const FactoryInfo*> out;
  for (const auto& [k, e] : entries_)
    if (e.info.kind == kind) out.push_back(&e.info);
  return out;
}

std::vector<std::string> Registry::names(PluginKind kind) const {
  std::vector<std::string> out;
  for (const auto* i : list(kind)) out.push_back(i->name);
  return out;
}

template <class T>
std::shared_ptr<T> Registry::make(PluginKind kind, const std::string& n, const ParamSet& p,
                                  const RunInfo& r) const {
  auto it = entries_.find(std::make_pair(int(kind), n));
  if (it == entries_.end())
    throw Error(std::string("no ") + to_string(kind) + " plugin named '" + n + "'");
  const Entry& e = it->second;
  const auto* f = std::get_if<Factory<T>>(&e.factory);
  if (!f) throw Error("internal: factory type mismatch for '" + n + "'");
  const FactoryInfo& info = e.info;
  if (!(info.dims & dim_bit(r.dim)))
    throw Error(std::string(to_string(kind)) + " '" + n + "' does not support " +
                std::to_string(r.dim) + "D runs");
  if (!(info.precisions & precision_bit(r.precision)))
    throw Error(std::string(to_string(kind)) + " '" + n + "' does not support precision " +
                to_string(r.precision));
  if (!(info.backends & backend_bit(r.backend)))
    throw Error(std::string(to_string(kind)) + " '" + n + "' has no " + to_string(r.backend) +
                " implementation; choose backend = \"" +
                (r.backend == Backend::Cpu ? "cuda" : "cpu") + "\"");
  if (r.backend == Backend::Cuda && e.cuda_version != 0) {
    // The plugin has kernels: they must include code this GPU can run.
    const auto dev = cuda::device_info();
    if (!cuda::archs_run_on(e.cuda_archs, dev.cc_major, dev.cc_minor))
      throw Error(
          std::string(to_string(kind)) + " '" + n + "' (" + info.library +
          ") has GPU code for CUDA architectures \"" + e.cuda_archs + "\" only, which " + dev.name +
          " (sm_" + std::to_string(dev.cc_major) + std::to_string(dev.cc_minor) +
          ") cannot run; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(dev.cc_major) +
          std::to_string(dev.cc_minor) + " or use backend = \"cpu\"");
  }
  std::unique_ptr<T> obj = (*f)(p, r);
  if (!obj) throw Error(std::string(to_string(kind)) + " '" + n + "': factory returned nothing");
  // The deleter (framework code) keeps the library loaded until the object is gone.
  auto lib = e.library;
  return std::shared_ptr<T>(obj.release(), [lib](T* ptr) { delete ptr; });
}

#define PARDYN_MAKE(T, kind, fn)                                                             \
  std::shared_ptr<T> Registry::fn(const std::string& n, const ParamSet& p, const RunInfo& r) \
      const {                                                                                \
    return make<T>(kind, n, p, r);                                                           \
  }
PARDYN_MAKE(Potential, PluginKind::Potential, make_potential)
PARDYN_MAKE(Scheme, PluginKind::Scheme, make_scheme)
PARDYN_MAKE(Integrator, PluginKind::Integrator, make_integrator)
PARDYN_MAKE(Modifier, PluginKind::Modifier, make_modifier)
PARDYN_MAKE(Generator, PluginKind::Generator, make_generator)
PARDYN_MAKE(Observer, PluginKind::Observer, make_observer)
#undef PARDYN_MAKE

}  // namespace pardyn
