// SPDX-License-Identifier: BSD-3-Clause
// The whole plugin SDK in one include: every plugin kind, the registration and the run's context.
// A plugin needs only the headers of what it uses (docs/plugins.md, "The SDK's headers", lists them); this umbrella keeps
// plugins written against the single header of earlier versions compiling. No template crosses the
// library boundary: plugins hand the framework factories of objects behind these virtual interfaces.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/plugin.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include "pardyn/backend_ops.hpp"    // BackendOps, Reductions, StateVector
#include "pardyn/box.hpp"            // Box, Boundary
#include "pardyn/comm.hpp"           // Comm
#include "pardyn/core.hpp"           // Error, Backend, Precision
#include "pardyn/generator.hpp"      // Generator, GenerateContext
#include "pardyn/integrator.hpp"     // Integrator
#include "pardyn/modifier.hpp"       // Modifier
#include "pardyn/neighbourhood.hpp"  // Neighbourhood, Reach, ForceRequest
#include "pardyn/observer.hpp"       // Observer, Thermo, ObserveContext
#include "pardyn/params.hpp"         // Schema, ParamSet
#include "pardyn/particles.hpp"      // ParticleStore, HostParticles
#include "pardyn/potential.hpp"      // Potential
#include "pardyn/registration.hpp"   // FactoryInfo, Registrar, kPluginAbi, PluginDescriptor
#include "pardyn/run_info.hpp"       // RunInfo
#include "pardyn/scheme.hpp"         // Scheme
#include "pardyn/step_context.hpp"   // StepContext, StateOut, StateIn
