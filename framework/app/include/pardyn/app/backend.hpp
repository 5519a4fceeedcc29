// SPDX-License-Identifier: BSD-3-Clause
// Backend selection: memory and element-wise operations of the CPU (OpenMP) backend and, when built
// with CUDA, the GPU backend.
#pragma once

#include <memory>
#include <string>

#include "pardyn/backend_ops.hpp"

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

namespace cuda {
// Makes the current GPU "small": what is free beyond `bytes` is taken now by one allocation held
// until the process ends, so every later allocation (pardyn's, cub's, a plugin's) sees at most
// `bytes` ([simulation] gpu_memory_limit: a run that does not fit on one GPU, shown on a big one).
// Returns the bytes left free.
std::size_t cap_memory(std::size_t bytes);
}  // namespace cuda

}  // namespace pardyn
