// Backend selection: memory and element-wise operations of the CPU (OpenMP) backend and, when built
// with CUDA, the GPU backend.
#pragma once

#include <memory>
#include <string>

#include "pardyn/plugin.hpp"

namespace pardyn {

struct BackendHandle {
  Backend backend = Backend::Cpu;
  MemoryResource* memory = nullptr;
  std::unique_ptr<BackendOps> ops;
  std::string description;  // e.g. "cpu (OpenMP, 2 threads)"
};

std::unique_ptr<BackendOps> make_cpu_ops();

// Resolves "cpu", "cuda" or "auto". `note` receives a line for the user when "auto" falls back.
BackendHandle make_backend(const std::string& name, std::string& note);

}  // namespace pardyn
