// SPDX-License-Identifier: BSD-3-Clause
#include "backends.hpp"

#include "pardyn/cuda.hpp"

namespace pardyn::test {

namespace {
std::string g_backend = "cpu";
}  // namespace

std::string gpu_missing() {
  if (!cuda::built_with_cuda()) return "libpardyn was built without CUDA: the CUDA run did not run";
  if (cuda::device_count() == 0) return "no CUDA device: the CUDA run did not run";
  return "";
}

const std::string& backend() { return g_backend; }

Backend backend_kind() { return g_backend == "cuda" ? Backend::Cuda : Backend::Cpu; }

void BackendRun::SetUp() {
  g_backend = GetParam();
  if (g_backend == "cuda") PARDYN_SKIP_WITHOUT_GPU();
}

void BackendRun::TearDown() { g_backend = "cpu"; }

}  // namespace pardyn::test
