#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Counts the instructions per interaction in the all-pairs kernels' inner loop, from the SASS.

    python3 bench/sass_count.py BUILD/lib/pardyn/plugins > ipi.txt

Runs `cuobjdump -sass` on the gravity and log plugins and finds, in each benchmarked kernel, the
unrolled inner loop: the backward branch whose body has the fewest instructions per interaction.
There is one special-function instruction (MUFU) per interaction. It prints, per configuration, the
instructions per interaction: all of them, FP32, FP64 and MUFU. bench_all_pairs_cuda --ipi reads
that table.
"""
import collections
import os
import re
import subprocess
import sys

# configuration name -> (plugin, piece of the mangled kernel name: evaluator, real, dim, energy, periodic)
CONFIGS = {
    "grav3d-f32": ("gravity", "Gravity9EvaluatorIfEEfLi3ELb0ELb0"),
    "grav3d-f64": ("gravity", "Gravity9EvaluatorIdEEdLi3ELb0ELb0"),
    "grav2d-f32": ("gravity", "Gravity9EvaluatorIfEEfLi2ELb0ELb0"),
    "grav2d-f64": ("gravity", "Gravity9EvaluatorIdEEdLi2ELb0ELb0"),
    "log2d-f32": ("log", "Log9EvaluatorIfEEfLi2ELb0ELb0"),
}

INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
FP32 = ("FFMA", "FADD", "FMUL")
FP64 = ("DFMA", "DADD", "DMUL")


def kernels(sass):
    """Splits cuobjdump output into {function name: [lines]}."""
    out, name = {}, None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            out[name].append(line)
    return out


def inner_loop(lines):
    insns, labels, pending = [], {}, []
    for line in lines:
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSN.search(line)
        if not m:
            continue
        addr, op, rest = int(m.group(1), 16), m.group(2), m.group(3)
        for lab in pending:
            labels[lab] = addr
        pending = []
        insns.append((addr, op, rest))
    best = None
    for k, (addr, op, rest) in enumerate(insns):
        if not op.startswith("BRA"):
            continue
        t = re.search(r"0x([0-9a-f]+)", rest)
        target = int(t.group(1), 16) if t else None
        if target is None:
            lab = re.search(r"(\.L_x_\d+)", rest)
            target = labels.get(lab.group(1)) if lab else None
        if target is None or target >= addr:
            continue
        body = [o for (a, o, _) in insns if target <= a <= addr and o != "NOP"]
        mufu = sum(1 for o in body if o.startswith("MUFU"))
        if mufu < 4:
            continue
        per = len(body) / mufu
        if best is None or per < best[0]:
            best = (per, body, mufu)
    return best


def main():
    plugins = sys.argv[1] if len(sys.argv) > 1 else "build/lib/pardyn/plugins"
    cache = {}
    print("# config  total  fp32  fp64  mufu   (instructions per interaction in the inner loop)")
    for cfg, (plugin, key) in CONFIGS.items():
        if plugin not in cache:
            path = os.path.join(plugins, f"libpardyn_{plugin}.so")
            cache[plugin] = kernels(subprocess.run(["cuobjdump", "-sass", path], check=True,
                                                   capture_output=True, text=True).stdout)
        names = [n for n in cache[plugin] if "all_pairs_kernel" in n and key in n]
        if not names:
            print(f"# {cfg}: kernel not found", file=sys.stderr)
            continue
        found = inner_loop(cache[plugin][names[0]])
        if not found:
            print(f"# {cfg}: no inner loop found", file=sys.stderr)
            continue
        per, body, mufu = found
        ops = collections.Counter(o.split(".")[0] for o in body)
        fp32 = sum(ops[o] for o in FP32) / mufu
        fp64 = sum(ops[o] for o in FP64) / mufu
        print(f"{cfg} {per:.3f} {fp32:.3f} {fp64:.3f} 1.000")
        mix = ", ".join(f"{o} {c / mufu:.2f}" for o, c in ops.most_common())
        print(f"#   {cfg}: {mufu} interactions in the loop body; per interaction: {mix}")


if __name__ == "__main__":
    main()
