// SPDX-License-Identifier: BSD-3-Clause
#include "compile.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "pardyn/core.hpp"
#include "pardyn/version.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace pardyn::jit {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] with its output (stdout and stderr) in `log`; the exit status, or -1 if it could not
// be started.
int run(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (!WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
}

// The cache folder, made private; refused when someone else owns it or may write it.
fs::path private_cache() {
  const fs::path dir = cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error("cannot make the cache folder " + dir.string() + ": " + ec.message() +
                " (set PARDYN_CACHE_DIR to a folder you can write)");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("the cache folder " + dir.string() + " is not a folder");
  if (st.st_uid != ::getuid())
    throw Error("the cache folder " + dir.string() +
                " belongs to another user; set PARDYN_CACHE_DIR to a folder of yours");
  if (st.st_mode & 022) ::chmod(dir.c_str(), 0700);
  return dir;
}

// A product others could have changed is not loaded.
bool trustworthy(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::getuid() &&
         (st.st_mode & 022) == 0;
}

// Holds an exclusive lock on `path` (a lock file) while it lives.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {}
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

std::uint64_t fnv(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::string cache_dir() {
  if (const std::string d = env("PARDYN_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/pardyn";
  if (const std::string h = env("HOME"); !h.empty()) return h + "/.cache/pardyn";
  return (fs::temp_directory_path() / ("pardyn-cache-" + std::to_string(::getuid()))).string();
}

std::string hash_hex(const std::string& text) {
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%016llx",
                static_cast<unsigned long long>(fnv(text, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv(text, 0x84222325cbf29ce4ull)));
  return b;
}

Built cached_file(const std::string& name, const std::function<void(const std::string&)>& make) {
  const fs::path dir = private_cache();
  const fs::path out = dir / name;
  Built b;
  b.path = out.string();
  if (trustworthy(out)) {
    b.cached = true;
    return b;
  }
  FileLock lock(dir / (name + ".lock"));
  if (trustworthy(out)) {  // made by another process while this one waited
    b.cached = true;
    return b;
  }
  std::error_code ec;
  fs::remove(out, ec);  // one that others could have written
  const fs::path tmp = dir / (name + ".tmp." + std::to_string(::getpid()));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    make(tmp.string());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  ::chmod(tmp.c_str(), 0700);
  fs::rename(tmp, out, ec);
  if (ec) throw Error("cannot write " + out.string() + ": " + ec.message());
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

std::vector<std::string> sdk_include_dirs(const std::string& plugin_file) {
  const fs::path lib = fs::path(plugin_file).parent_path().parent_path().parent_path();
  const fs::path installed = lib.parent_path() / "include";
  std::vector<std::string> dirs;
  if (fs::exists(installed / "pardyn" / "pair_potential.hpp")) dirs = {installed.string()};
  else dirs = split(PARDYN_JIT_BUILD_INCLUDES, '|');
  bool found = false;
  for (const auto& d : dirs)
    found = found || fs::exists(fs::path(d) / "pardyn" / "pair_potential.hpp");
  if (!found)
    throw Error("pardyn's SDK headers are not where this build put them (looked in " +
                installed.string() +
                " and in the build tree); reinstall pardyn, or use engine = "
                "\"interpreted\" (on the CPU)");
  return dirs;
}

namespace {
Toolchain detect_toolchain(const std::string& plugin_file) {
  Toolchain tc;
  tc.compiler = env("PARDYN_CXX");
  if (tc.compiler.empty()) tc.compiler = PARDYN_JIT_CXX;
  tc.flags = split(PARDYN_JIT_FLAGS, '|');
  // lib/pardyn/plugins/x.so: libpardyn.so two folders up, the SDK in the installation's include/
  // or, in a build tree, where CMake found it.
  const fs::path plugins = fs::path(plugin_file).parent_path();
  const fs::path lib = plugins.parent_path().parent_path();
  tc.libdir = lib.string();
  tc.include_dirs = sdk_include_dirs(plugin_file);
  if (!fs::exists(lib / "libpardyn.so"))
    throw Error("libpardyn.so is not in " + lib.string() +
                "; reinstall pardyn, or use engine = "
                "\"interpreted\"");
  // What the product depends on besides its source: the compiler's version, the flags, pardyn's
  // build and every SDK header.
  std::string id = PARDYN_VERSION_STRING;
  id += PARDYN_BUILD_ID;
  for (const auto& f : tc.flags) id += " " + f;
  id += "\n" + tc.compiler + "\n" + tc.libdir + "\n";
  const fs::path log =
      private_cache() / ("compiler-version." + std::to_string(::getpid()) + ".txt");
  if (run({tc.compiler, "--version"}, log.string()) != 0) {
    std::error_code ec;
    fs::remove(log, ec);
    throw Error("cannot run the C++ compiler '" + tc.compiler +
                "' (set PARDYN_CXX to one, or use engine = \"interpreted\")");
  }
  id += read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  std::vector<fs::path> headers;
  for (const auto& d : tc.include_dirs)
    for (const auto& e : fs::recursive_directory_iterator(fs::path(d) / "pardyn", ec))
      if (e.is_regular_file()) headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers) id += h.filename().string() + hash_hex(read_file(h));
  tc.identity = id;
  return tc;
}
}  // namespace

// Found once per plugin and process (it runs the compiler and reads every SDK header).
Toolchain find_toolchain(const std::string& plugin_file) {
  static std::mutex m;
  static std::map<std::string, Toolchain> known;
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(plugin_file);
  if (it == known.end()) it = known.emplace(plugin_file, detect_toolchain(plugin_file)).first;
  return it->second;
}

bool compiler_available(const std::string& plugin_file, std::string* why) {
  try {
    find_toolchain(plugin_file);
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

Built build_shared(const std::string& what, const std::string& source,
                   const std::map<std::string, std::string>& headers, const Toolchain& tc) {
  std::string all = tc.identity + source;
  for (const auto& [name, text] : headers) all += name + text;
  const std::string key = hash_hex(all);
  return cached_file("law-" + key + ".so", [&](const std::string& out) {
    const fs::path work = fs::path(out + ".src");
    fs::create_directories(work);
    for (const auto& [name, text] : headers) std::ofstream(work / name) << text;
    std::ofstream(work / "law.cpp") << source;
    std::vector<std::string> argv{tc.compiler};
    argv.insert(argv.end(), tc.flags.begin(), tc.flags.end());
    argv.push_back("-I" + work.string());
    for (const auto& d : tc.include_dirs) argv.push_back("-I" + d);
    argv.insert(argv.end(), {"-shared", "-o", out, (work / "law.cpp").string(), "-L" + tc.libdir,
                             "-Wl,-rpath," + tc.libdir, "-lpardyn"});
    const fs::path log = private_cache() / ("law-" + key + ".log");
    const int rc = run(argv, log.string());
    std::error_code ec;
    if (rc == 0) {
      fs::remove_all(work, ec);
      fs::remove(log, ec);
      return;
    }
    std::string msg = "compiling " + what + " with " + tc.compiler + " failed";
    msg +=
        rc < 0 ? " (the compiler could not be run)" : " (exit status " + std::to_string(rc) + ")";
    if (!env("PARDYN_JIT_VERBOSE").empty()) {
      msg += "; its messages:\n" + read_file(log);
    } else {
      msg += "; its messages are in " + log.string() +
             " (PARDYN_JIT_VERBOSE=1 prints them); the source is in " + work.string() +
             ". engine = \"interpreted\" runs the law without a compiler";
    }
    throw Error(msg);
  });
}

Library::Library(const std::string& path) : path_(path) {
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* e = ::dlerror();
    throw Error("cannot load " + path + ": " + (e ? e : "unknown error") +
                " (delete it to have it compiled again)");
  }
}
Library::~Library() {
  if (handle_) ::dlclose(handle_);
}
void* Library::symbol(const char* name) const {
  void* s = ::dlsym(handle_, name);
  if (!s) throw Error(path_ + " has no symbol " + name + " (delete it to have it compiled again)");
  return s;
}

}  // namespace pardyn::jit
