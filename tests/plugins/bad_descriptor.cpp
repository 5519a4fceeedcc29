// SPDX-License-Identifier: BSD-3-Clause
// Plugins whose descriptor does not match this pardyn (ABI, build, version). Each says so in its stamp
// too, which the loader reads before loading the file; the runtime descriptor says the same.
#include <boost/dll/alias.hpp>

#include "pardyn/plugin_export.hpp"

namespace {
void register_nothing(pardyn::Registrar&) {}
#if defined(BAD_ABI)
#define TEST_ABI (pardyn::kPluginAbi + 7)
#define TEST_VERSION PARDYN_VERSION_STRING
#define TEST_BUILD PARDYN_BUILD_ID
#elif defined(BAD_BUILD)
#define TEST_ABI pardyn::kPluginAbi
#define TEST_VERSION PARDYN_VERSION_STRING
#define TEST_BUILD "othercc-99 cxxabi-1 glibcxx11-0"
#else
#define TEST_ABI pardyn::kPluginAbi
#define TEST_VERSION "0.0.0-other"
#define TEST_BUILD PARDYN_BUILD_ID
#endif
const pardyn::PluginDescriptor* descriptor() {
  static const pardyn::PluginDescriptor d{TEST_ABI, TEST_VERSION,       TEST_BUILD,       0,
                                          "",       PARDYN_PLUGIN_NAME, &register_nothing};
  return &d;
}
}  // namespace
BOOST_DLL_ALIAS(descriptor, pardyn_plugin_descriptor)
PARDYN_PLUGIN_STAMP(TEST_ABI, TEST_VERSION, TEST_BUILD, 0, "", PARDYN_PLUGIN_NAME)
