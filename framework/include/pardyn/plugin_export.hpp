// SPDX-License-Identifier: BSD-3-Clause
// A plugin library's exports: the descriptor (through Boost.DLL) and the stamp, written by
// PARDYN_PLUGIN(fn) (or PARDYN_PAIR_POTENTIAL_PLUGIN / PARDYN_EXTERNAL_POTENTIAL_PLUGIN, which end
// in it). Only the host-side registration unit of a plugin (the .cpp file that holds that macro)
// includes this header: the interfaces are in the SDK headers (plugin.hpp includes them all), and CUDA code (.cu, .cuh and the headers
// they include) never sees Boost.DLL.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// CUDA code includes the SDK headers or pardyn/pair_potential_cuda.cuh, never this header.
#error "pardyn/plugin_export.hpp (Boost.DLL) is host-only: for a plugin's registration .cpp"
#endif

#include <boost/dll/alias.hpp>

#include "pardyn/plugin.hpp"
#include "pardyn/version.hpp"

// Exports the descriptor of a plugin library whose register function is `fn`. One per library.
#ifndef PARDYN_PLUGIN_NAME
#define PARDYN_PLUGIN_NAME "unnamed"
#endif
#ifndef PARDYN_PLUGIN_CUDA_ARCHS
#define PARDYN_PLUGIN_CUDA_ARCHS ""
#endif
// Whether the plugin's loops (instantiated in this unit) were compiled with optimisation: the loader
// and `pardyn check-plugin` say so when they were not (docs/plugins.md).
#if defined(__OPTIMIZE__)
#define PARDYN_PLUGIN_OPTIMISED 1u
#else
#define PARDYN_PLUGIN_OPTIMISED 0u
#endif
#if defined(PARDYN_PLUGIN_HAS_CUDA)
#include <cuda_runtime_api.h>
#define PARDYN_PLUGIN_CUDA_VERSION CUDART_VERSION
#else
#define PARDYN_PLUGIN_CUDA_VERSION 0
#endif

#undef PARDYN_PLUGIN  // registration.hpp's stand-in, which only says to include this header
#define PARDYN_PLUGIN(fn)                                                           \
  namespace {                                                                       \
  const ::pardyn::PluginDescriptor* pardyn_plugin_descriptor_fn() {                 \
    static const ::pardyn::PluginDescriptor d{::pardyn::kPluginAbi,                 \
                                              PARDYN_VERSION_STRING,                \
                                              PARDYN_BUILD_ID,                      \
                                              PARDYN_PLUGIN_CUDA_VERSION,           \
                                              PARDYN_PLUGIN_CUDA_ARCHS,             \
                                              PARDYN_PLUGIN_NAME,                   \
                                              &fn};                                 \
    return &d;                                                                      \
  }                                                                                 \
  }                                                                                 \
  BOOST_DLL_ALIAS(pardyn_plugin_descriptor_fn, pardyn_plugin_descriptor)            \
  PARDYN_PLUGIN_STAMP(::pardyn::kPluginAbi, PARDYN_VERSION_STRING, PARDYN_BUILD_ID, \
                      PARDYN_PLUGIN_CUDA_VERSION, PARDYN_PLUGIN_CUDA_ARCHS, PARDYN_PLUGIN_NAME)

// The stamp alone (PARDYN_PLUGIN writes it; a test plugin may write a false one).
#define PARDYN_PLUGIN_STAMP(abi, version, build_id, cuda_version, cuda_archs, name)  \
  extern "C" __attribute__((visibility("default"), used, section(".pardyn_plugin"))) \
  const ::pardyn::PluginStamp pardyn_plugin_stamp = {                                \
      "pardyn-plugin", abi,        cuda_version, version,                            \
      build_id,        cuda_archs, name,         PARDYN_PLUGIN_OPTIMISED};
