// SPDX-License-Identifier: BSD-3-Clause
#include "nvrtc.hpp"

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compile.hpp"
#include "pardyn/core.hpp"
#include "pardyn/version.hpp"

namespace fs = std::filesystem;

namespace pardyn::jit {

namespace {

constexpr const char* kMagic = "pardyn cubin 1\n";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An NVRTC call's failure, with the file and line of the call.
[[noreturn]] void nvrtc_fail(nvrtcResult r, const char* call, const char* file, int line) {
  throw Error(std::string("NVRTC error at ") + file + ":" + std::to_string(line) + ": " + call +
              ": " + nvrtcGetErrorString(r));
}
#define PARDYN_NVRTC_CHECK(call)                                                      \
  do {                                                                                \
    const nvrtcResult pardyn_r_ = (call);                                             \
    if (pardyn_r_ != NVRTC_SUCCESS) nvrtc_fail(pardyn_r_, #call, __FILE__, __LINE__); \
  } while (0)

[[noreturn]] void cuda_fail(cudaError_t e, const char* call, const char* file, int line,
                            const std::string& more) {
  throw Error(std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " + call +
              ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")" + more);
}
#define PARDYN_RTC_CUDA_CHECK(call, more)                                                \
  do {                                                                                   \
    const cudaError_t pardyn_e_ = (call);                                                \
    if (pardyn_e_ != cudaSuccess) cuda_fail(pardyn_e_, #call, __FILE__, __LINE__, more); \
  } while (0)

// Destroys the program however the compile ends.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);
  }
};

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  PARDYN_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return std::to_string(major) + "." + std::to_string(minor);
}

bool nvrtc_supports(int sm) {
  int n = 0;
  PARDYN_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&n));
  std::vector<int> archs(std::size_t(std::max(n, 0)));
  if (n > 0) PARDYN_NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()));
  return std::find(archs.begin(), archs.end(), sm) != archs.end();
}

std::vector<std::string> nvrtc_options(const GpuSource& s) {
  // As nvcc compiles the built-in laws (framework/CMakeLists.txt): denormals flushed, FMA
  // contraction on (NVRTC's default), C++17.
  std::vector<std::string> o = {"-arch=" + s.arch, "-std=c++17", "-default-device", "-ftz=true",
                                "-DNDEBUG"};
  for (const auto& d : s.include_dirs) {
    o.push_back("-I" + d);
    if (fs::exists(fs::path(d) / "pardyn" / "rtc" / "type_traits"))
      o.push_back("-I" + (fs::path(d) / "pardyn" / "rtc").string());
  }
  return o;
}

Cubin compile_cubin(const GpuSource& s) {
  std::vector<const char*> hnames, htexts;
  for (const auto& [name, text] : s.headers) {
    hnames.push_back(name.c_str());
    htexts.push_back(text.c_str());
  }
  Program prog;
  PARDYN_NVRTC_CHECK(nvrtcCreateProgram(&prog.p, s.source.c_str(), "pardyn_law.cu",
                                        int(hnames.size()), htexts.data(), hnames.data()));
  for (const auto& n : s.names) PARDYN_NVRTC_CHECK(nvrtcAddNameExpression(prog.p, n.c_str()));
  const std::vector<std::string> options = nvrtc_options(s);
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog.p, int(opts.size()), opts.data());
  if (r != NVRTC_SUCCESS) {
    std::size_t n = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog.p, &n) == NVRTC_SUCCESS && n > 1) {
      log.resize(n);
      if (nvrtcGetProgramLog(prog.p, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    std::string msg = "compiling " + s.what + " for the GPU (" + s.arch + ") with NVRTC " +
                      nvrtc_version() + " failed (" + nvrtcGetErrorString(r) + ")";
    const char* verbose = std::getenv("PARDYN_JIT_VERBOSE");
    if (verbose && *verbose) {
      msg += "; its messages:\n" + log;
    } else {
      // The log and the source, kept for a report: never printed unless asked.
      const fs::path dir = cache_dir();
      const std::string key = cubin_key(s);
      std::error_code ec;
      fs::create_directories(dir, ec);
      std::ofstream(dir / ("gpu-" + key + ".log")) << log;
      std::ofstream(dir / ("gpu-" + key + ".cu")) << s.source;
      msg += "; its messages are in " + (dir / ("gpu-" + key + ".log")).string() +
             " (PARDYN_JIT_VERBOSE=1 prints them). backend = \"cpu\" runs the law without NVRTC";
    }
    throw Error(msg);
  }
  Cubin c;
  std::size_t size = 0;
  PARDYN_NVRTC_CHECK(nvrtcGetCUBINSize(prog.p, &size));
  c.code.resize(size);
  PARDYN_NVRTC_CHECK(nvrtcGetCUBIN(prog.p, c.code.data()));
  for (const auto& n : s.names) {
    const char* m = nullptr;
    PARDYN_NVRTC_CHECK(nvrtcGetLoweredName(prog.p, n.c_str(), &m));
    c.lowered[n] = m;
  }
  return c;
}

const Sdk& find_sdk(const std::string& plugin_file) {
  static std::mutex m;
  static std::map<std::string, Sdk> known;
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(plugin_file);
  if (it != known.end()) return it->second;
  Sdk sdk;
  sdk.include_dirs = sdk_include_dirs(plugin_file);
  std::vector<fs::path> headers;
  std::error_code ec;
  for (const auto& d : sdk.include_dirs)
    for (const auto& e : fs::recursive_directory_iterator(fs::path(d) / "pardyn", ec))
      if (e.is_regular_file()) headers.push_back(e.path());
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers) sdk.identity += h.string() + " " + hash_hex(read_file(h)) + "\n";
  return known.emplace(plugin_file, std::move(sdk)).first->second;
}

std::string cubin_key(const GpuSource& s) {
  std::string all = kMagic;
  all += std::string(PARDYN_VERSION_STRING) + " " + PARDYN_BUILD_ID + "\nNVRTC " + nvrtc_version() +
         "\n";
  for (const auto& o : nvrtc_options(s)) all += o + "\n";
  for (const auto& [name, text] : s.headers) all += name + "\n" + hash_hex(text) + "\n";
  all += s.sdk_identity;
  for (const auto& n : s.names) all += n + "\n";
  all += s.source;
  return hash_hex(all);
}

std::string serialize(const Cubin& c) {
  std::string out = kMagic;
  out += std::to_string(c.lowered.size()) + "\n";
  for (const auto& [name, mangled] : c.lowered) out += name + "\n" + mangled + "\n";
  out += std::to_string(c.code.size()) + "\n";
  out.append(c.code.data(), c.code.size());
  out += "\n";
  out += hash_hex(out) + "\n";  // over everything before it
  return out;
}

bool parse(const std::string& bytes, Cubin& out) {
  // The checksum line: "\n" + 32 hexadecimal digits + "\n" at the end, over everything before it.
  constexpr std::size_t kTail = 1 + 32 + 1;
  const std::size_t magic = std::strlen(kMagic);
  if (bytes.size() < magic + kTail || bytes.compare(0, magic, kMagic) != 0) return false;
  const std::size_t body = bytes.size() - kTail + 1;  // up to and with the "\n" before the hash
  if (bytes.compare(body, 32, hash_hex(bytes.substr(0, body))) != 0 || bytes.back() != '\n')
    return false;
  std::istringstream in(bytes.substr(magic, body - magic));
  std::size_t count = 0, size = 0;
  std::string line;
  if (!std::getline(in, line)) return false;
  try {
    count = std::stoul(line);
    Cubin c;
    for (std::size_t i = 0; i < count; ++i) {
      std::string name, mangled;
      if (!std::getline(in, name) || !std::getline(in, mangled) || mangled.empty()) return false;
      c.lowered[name] = mangled;
    }
    if (!std::getline(in, line)) return false;
    size = std::stoul(line);
    c.code.resize(size);
    if (!in.read(c.code.data(), std::streamsize(size)) || in.get() != '\n' ||
        in.peek() != std::char_traits<char>::eof())
      return false;
    out = std::move(c);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void discard(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

GpuBuilt cached_cubin(const GpuSource& s) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string name = "gpu-" + cubin_key(s) + ".cubin";
  GpuBuilt b;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Cubin made;
    const Built built = cached_file(name, [&](const std::string& path) {
      made = compile_cubin(s);
      std::ofstream out(path, std::ios::binary);
      const std::string bytes = serialize(made);
      out.write(bytes.data(), std::streamsize(bytes.size()));
      if (!out.flush()) throw Error("cannot write " + path);
    });
    b.path = built.path;
    b.cached = built.cached;
    if (!built.cached) {
      b.cubin = std::move(made);
      break;
    }
    if (parse(read_file(built.path), b.cubin)) break;
    // A cut or changed entry (a full disk, a crash before the rename of an older pardyn): rebuilt.
    discard(built.path);
    if (attempt == 1) throw Error("the cache entry " + built.path + " cannot be read back");
  }
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

GpuModule::GpuModule(const Cubin& c) {
  cudaLibrary_t lib = nullptr;
  PARDYN_RTC_CUDA_CHECK(
      cudaLibraryLoadData(&lib, c.code.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
      " (loading a run-time compiled cubin)");
  library_ = lib;
  for (const auto& [name, mangled] : c.lowered) {
    cudaKernel_t k = nullptr;
    const cudaError_t e = cudaLibraryGetKernel(&k, lib, mangled.c_str());
    if (e != cudaSuccess) {
      cudaLibraryUnload(lib);
      library_ = nullptr;
      cuda_fail(e, "cudaLibraryGetKernel", __FILE__, __LINE__, " (" + name + ")");
    }
    kernels_[name] = reinterpret_cast<const void*>(k);
  }
}

GpuModule::~GpuModule() {
  // At exit the runtime may already be gone (cudaErrorCudartUnloading): nothing left to free then.
  if (library_) (void)cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

const void* GpuModule::kernel(const std::string& name) const {
  const auto it = kernels_.find(name);
  if (it == kernels_.end())
    throw Error("internal: the run-time compiled code has no kernel " + name);
  return it->second;
}

}  // namespace pardyn::jit
