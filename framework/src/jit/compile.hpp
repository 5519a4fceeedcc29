// SPDX-License-Identifier: BSD-3-Clause
// Run-time compilation of generated code, cached on disk (docs/formulas.md, "How a formula runs").
//
// The cache folder is $PARDYN_CACHE_DIR, else $XDG_CACHE_HOME/pardyn, else ~/.cache/pardyn; each
// product is named by a hash of everything that goes into it (the source, the compiler and its
// version, the flags, pardyn's version and build, the SDK headers), so that a changed pardyn or
// compiler never reuses an old one. Products are written under a temporary name and renamed, with a
// lock held while compiling: ranks of a parallel run that need the same product compile it once.
// The folder is made private (0700); a cached file that others could have written is not used.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pardyn::jit {

std::string cache_dir();

// A hash of the text as 32 hexadecimal digits (two independent 64-bit FNV-1a hashes).
std::string hash_hex(const std::string& text);

// What compiles a generated C++ source into a shared library loadable into this process: the C++
// compiler pardyn was built with (or $PARDYN_CXX), pardyn's flags, the SDK's include folders and
// libpardyn's folder, found next to `plugin_file` (the plugin that asks: an installation's
// lib/pardyn/plugins/x.so, or the build tree's).
struct Toolchain {
  std::string compiler;
  std::vector<std::string> flags;
  std::vector<std::string> include_dirs;
  std::string libdir;    // where libpardyn.so is
  std::string identity;  // the compiler's --version, the flags and the SDK headers' hash
};
// Throws pardyn::Error saying what is missing when no compiler or no SDK headers are found.
Toolchain find_toolchain(const std::string& plugin_file);

// The SDK's include folders for a plugin at `plugin_file`: an installation's include/, or the build
// tree's. Throws pardyn::Error when pardyn's headers are in neither.
std::vector<std::string> sdk_include_dirs(const std::string& plugin_file);

// Whether the compiler of `find_toolchain` can be run (without compiling anything).
bool compiler_available(const std::string& plugin_file, std::string* why = nullptr);

struct Built {
  std::string path;     // the shared library (or other product) in the cache
  bool cached = false;  // found in the cache, not compiled now
  double seconds = 0;   // compile time (0 when cached)
};

// `source` (with `headers`: file name -> text, written next to it) compiled into a shared library
// by `tc`, or found in the cache. On failure throws pardyn::Error naming `what`; the compiler's
// messages are in it only when PARDYN_JIT_VERBOSE is set (they are kept in the cache folder's
// .log file, which the message names).
Built build_shared(const std::string& what, const std::string& source,
                   const std::map<std::string, std::string>& headers, const Toolchain& tc);

// Looks for a product `name` in the cache or makes it with `make(path)` (which writes the file at
// `path`), under the cache's lock: the general form of build_shared, for the GPU's code.
Built cached_file(const std::string& name, const std::function<void(const std::string&)>& make);

// A loaded shared library (dlopen); closed when the last reference goes.
class Library {
 public:
  explicit Library(const std::string& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace pardyn::jit
