// SPDX-License-Identifier: BSD-3-Clause
// Run-time compilation of generated device code with NVRTC, cached on disk, and the loading of the
// result (docs/formulas.md, "On the GPU"). The compile and the cache need no GPU (NVRTC is a host
// library); GpuModule loads a cubin into the process's CUDA context.
//
// A cached cubin lives in the folder of compile.hpp's cache_dir() as gpu-<key>.cubin, the key a
// hash of everything that decides it: the generated source, the kernels' names, the embedded
// headers and every SDK header it may include, the NVRTC version and options, the GPU architecture
// and pardyn's version and build. It is written under a temporary name and renamed (under the
// cache's lock), and holds the kernels' lowered names and a checksum: an entry that does not parse,
// or that CUDA cannot load, is removed and compiled again.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pardyn::jit {

struct GpuSource {
  std::string what;    // what is compiled, for messages ("[[potential]] #1 (expression), ...")
  std::string source;  // the program
  std::map<std::string, std::string> headers;  // file name -> text, includable by name
  std::vector<std::string> include_dirs;       // the SDK's (with pardyn/rtc inside)
  std::string sdk_identity;                    // what they hold (Sdk::identity)
  std::vector<std::string> names;              // the kernels' name expressions to instantiate
  std::string arch;                            // "sm_90"
};

struct Cubin {
  std::vector<char> code;
  std::map<std::string, std::string> lowered;  // name expression -> mangled name
};

// NVRTC's version as "major.minor".
std::string nvrtc_version();

// Whether NVRTC compiles for sm_<sm> (e.g. 90).
bool nvrtc_supports(int sm);

// The options NVRTC compiles `s` with.
std::vector<std::string> nvrtc_options(const GpuSource& s);

// Compiles with NVRTC. On failure throws pardyn::Error naming s.what; NVRTC's log is in the
// message only when PARDYN_JIT_VERBOSE is set (else it is written to the cache folder and named).
Cubin compile_cubin(const GpuSource& s);

// The cache key of `s` (32 hexadecimal digits).
std::string cubin_key(const GpuSource& s);

// The bytes of a cache entry, and back (false: not a whole, unchanged entry).
std::string serialize(const Cubin& c);
bool parse(const std::string& bytes, Cubin& out);

struct GpuBuilt {
  Cubin cubin;
  std::string path;     // the cache entry
  bool cached = false;  // read from the cache, not compiled now
  double seconds = 0;   // the whole: compile and write, or read and check
};
// `s` compiled, or read from the cache. A cache entry that does not parse is removed and rebuilt.
GpuBuilt cached_cubin(const GpuSource& s);

// Removes a cache entry that CUDA refused to load (see cached_cubin).
void discard(const std::string& path);

// The SDK's include folders next to `plugin_file` (an installation's include/, or the build tree's)
// and a hash of every header in them: throws pardyn::Error when the headers are not found.
struct Sdk {
  std::vector<std::string> include_dirs;  // pardyn/rtc is in the first that has it
  std::string identity;
};
const Sdk& find_sdk(const std::string& plugin_file);

// A cubin loaded into the current device's context (cudaLibraryLoadData): its kernels as the
// runtime API's launch functions take them. Every CUDA call is checked (file:line in the message).
class GpuModule {
 public:
  explicit GpuModule(const Cubin& c);
  ~GpuModule();
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
  // The kernel of name expression `name`; throws when the cubin has none.
  const void* kernel(const std::string& name) const;

 private:
  void* library_ = nullptr;  // cudaLibrary_t
  std::map<std::string, const void*> kernels_;
};

}  // namespace pardyn::jit
