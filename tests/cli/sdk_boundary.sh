# SPDX-License-Identifier: BSD-3-Clause
# The SDK's boundary, read from the sources (docs/plugins.md, "The SDK's headers"):
#   1. no CUDA translation unit sees Boost.DLL: nothing a .cu or .cuh file includes, directly or
#      through pardyn's headers, includes <boost/dll...> or pardyn/plugin_export.hpp (the header
#      of a plugin's registration .cpp; it also stops nvcc with an #error);
#   2. tests and benchmarks include public headers, or internal ones only through the targets that
#      expose them (pardyn_internal, pardyn_test_support, a plugin's *_internal target): no
#      "../" paths and no framework/src, plugins/ or potentials/ paths.
. "$(dirname "$0")/common.sh"

python3 - "$SRC" <<'PY' || fail "the SDK boundary is crossed (above)"
import os, re, sys

src = sys.argv[1]
include_dirs = [os.path.join(src, d) for d in
                ("framework/include", "framework/src", "potentials", "plugins/common")]
quoted = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
angled = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)
bad = []

def resolve(name, here):
    for d in [here] + include_dirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None  # generated (version.hpp) or a system header

def walk(path, chain, seen):
    if path in seen:
        return
    seen.add(path)
    text = open(path, encoding="utf-8", errors="replace").read()
    for name in angled.findall(text):
        if name.startswith("boost/dll"):
            bad.append(" -> ".join(chain + [name]))
    for name in quoted.findall(text):
        if name.endswith("plugin_export.hpp"):
            bad.append(" -> ".join(chain + [name]))
            continue
        p = resolve(name, os.path.dirname(path))
        if p:
            walk(p, chain + [os.path.relpath(p, src)], seen)

cuda_files = 0
for top in ("framework", "plugins", "potentials", "examples", "tests", "bench"):
    for root, _, files in os.walk(os.path.join(src, top)):
        for f in sorted(files):
            if f.endswith((".cu", ".cuh")):
                p = os.path.join(root, f)
                cuda_files += 1
                walk(p, [os.path.relpath(p, src)], set())
for b in bad:
    print("CUDA code includes Boost.DLL:", b)

wrong = re.compile(r'^\s*#\s*include\s*"(\.\./[^"]*|[^"]*(framework/src|plugins/|potentials/)[^"]*)"',
                   re.M)
checked = 0
for top in ("tests", "bench"):
    for root, _, files in os.walk(os.path.join(src, top)):
        for f in sorted(files):
            if f.endswith((".cpp", ".hpp", ".cu", ".cuh")):
                p = os.path.join(root, f)
                checked += 1
                for m in wrong.finditer(open(p, encoding="utf-8").read()):
                    bad.append(m.group(1))
                    print(f"{os.path.relpath(p, src)}: includes \"{m.group(1)}\" by path")
print(f"{cuda_files} CUDA files walked, {checked} test and benchmark sources read")
sys.exit(1 if bad else 0)
PY
echo "ok: the SDK boundary holds"
