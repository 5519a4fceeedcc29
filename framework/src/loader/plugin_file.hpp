// SPDX-License-Identifier: BSD-3-Clause
// What the loader checks of a plugin file before any of its code runs (docs/plugins.md, "What the
// loader checks"): who may change it, that it is a complete shared library, and its stamp.
#pragma once

#include <string>

#include "pardyn/registration.hpp"

namespace pardyn::plugin_file {

// The symbol PARDYN_PLUGIN exports (its BOOST_DLL_ALIAS) and the loader looks up.
constexpr const char* kDescriptorSymbol = "pardyn_plugin_descriptor";

// Why `path` (absolute, without symbolic links) cannot be trusted, or "" if it can: it and every
// folder above it up to / must be owned by root or by the user running pardyn and be writable by
// nobody else. A folder with the sticky bit (such as /tmp, mode 1777) may be writable by others when
// it lies above `own_folder` (the plugin's own folder), because there only an entry's owner can
// rename or delete it.
std::string untrusted(const std::string& path, const std::string& own_folder);

struct Inspection {
  std::string problem;  // "" when the file may be loaded
  PluginStamp stamp{};
};

// Reads the ELF headers of `path` without loading it: they must be those of a shared library for
// this machine, and every table and segment they point at must lie inside the file (a truncated copy
// makes the dynamic loader crash). Then reads the stamp (PluginStamp) from its section and checks
// that the descriptor symbol is exported.
Inspection inspect(const std::string& path);

}  // namespace pardyn::plugin_file
