// SPDX-License-Identifier: BSD-3-Clause
// The backends a test runs on, written once for every suite: the list ("cpu", "cuda"), the
// parameterised fixture that runs each test on both, and the skip, with its reason, of a CUDA run
// on a machine that cannot make one (libpardyn built without CUDA, or no usable device).
//
//   class RdfRun : public test::BackendRun {};
//   PARDYN_INSTANTIATE_BACKENDS(RdfRun);
//   TEST_P(RdfRun, IdealGasIsOne) { ideal_gas(test::backend()); }   // RdfRun.IdealGasIsOne/cuda
//
// A test that needs the GPU whatever its parameters (a CPU-GPU comparison, a CUDA-only unit) starts
// with PARDYN_SKIP_WITHOUT_GPU().
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "pardyn/core.hpp"

namespace pardyn::test {

// The backends, as parameter values (for ::testing::Combine with a suite's other parameters).
inline auto backends() { return ::testing::Values(std::string("cpu"), std::string("cuda")); }

// Why no CUDA run can happen here ("" when one can): libpardyn built without CUDA, or no device.
std::string gpu_missing();

// The backend a BackendRun test runs on ("cpu" or "cuda"; "cpu" outside such a test), for its
// scenarios' simulation.backend.
const std::string& backend();
// The same as a Backend.
Backend backend_kind();

// Runs each test of a suite once per backend; the CUDA run skips, saying why, without a GPU.
class BackendRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;
};

}  // namespace pardyn::test

// The instantiation of a BackendRun suite: Backends/<Suite>.<Test>/cpu and .../cuda.
#define PARDYN_INSTANTIATE_BACKENDS(Suite)                              \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::pardyn::test::backends(), \
                           [](const auto& info) { return std::string(info.param); })

// Skips the running test, saying why, where no CUDA run can happen.
#define PARDYN_SKIP_WITHOUT_GPU()                                            \
  if (const std::string pardyn_gpu_missing_ = ::pardyn::test::gpu_missing(); \
      !pardyn_gpu_missing_.empty())                                          \
  GTEST_SKIP() << pardyn_gpu_missing_
