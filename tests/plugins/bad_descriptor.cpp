// Plugins whose descriptor does not match this pardyn (ABI, build, version).
#include <boost/dll/alias.hpp>

#include "pardyn/plugin.hpp"

namespace {
void register_nothing(pardyn::Registrar&) {}
const pardyn::PluginDescriptor* descriptor() {
#if defined(BAD_ABI)
  static const pardyn::PluginDescriptor d{pardyn::kPluginAbi + 7, PARDYN_VERSION_STRING,
                                          PARDYN_BUILD_ID, 0, "", "bad_abi", &register_nothing};
#elif defined(BAD_BUILD)
  static const pardyn::PluginDescriptor d{pardyn::kPluginAbi, PARDYN_VERSION_STRING,
                                          "othercc-99 cxxabi-1 glibcxx11-0", 0, "", "bad_build",
                                          &register_nothing};
#else
  static const pardyn::PluginDescriptor d{pardyn::kPluginAbi, "0.0.0-other", PARDYN_BUILD_ID, 0,
                                          "", "bad_version", &register_nothing};
#endif
  return &d;
}
}  // namespace
BOOST_DLL_ALIAS(descriptor, pardyn_plugin_descriptor)
