// SPDX-License-Identifier: BSD-3-Clause
// A plugin that includes an application header: with the SDK's include path alone the header is
// not found (tests/CMakeLists.txt, sdk.no_app_headers).
#include "pardyn/app/simulation.hpp"
