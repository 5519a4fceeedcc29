#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where the time of bench/scaling.sh's runs went, and what they would send over a network: reads
the runs' folders and logs under OUT (ROW-G/log.txt, ROW-G.log with PARDYN_PARALLEL_STATS=1) and
prints, for docs/parallel.md ("Scaling", "What travels per step"), one line per finding:

  step_ms ROW G MS                      the step loop's time per step (log.txt's timing)
  exchange ROW G evals E total_ms T own_ms O side_ms S sources_ms W region_s R total_s X
                                        rank 0's tree exchange per evaluation: its own tree, the
                                        side work beside the own walk (region, walks for the
                                        others, posting, the own walk, waiting), the sources' tree
                                        and walk; and the run's totals of the region and the whole
  sources ROW G min A max B             sources received per rank (the last evaluation)
  ghosts ROW G rank0 N owned M pct P    the domain decomposition's ghosts of rank 0 (and as a
                                        share of its own particles)
  build_walk_1gpu ROW MS                one GPU: the neighbour build and the long-range force per
                                        evaluation
  analysis ROW G per_s S pct_loop P pct_200 Q count C
                                        the analyses: seconds each, their share of the loop, and
                                        the share they would have run once per 200 steps
  model ROW mb_lo A mb_hi B ms_lo C ms_hi D step_ms E pct_lo F pct_hi G
                                        on 2 GPUs: the bytes one rank receives per evaluation and
                                        their time at 12.5 GB/s (a 100 Gb/s network), against the
                                        step

    python3 bench/scaling/parts.py OUT
"""
import glob
import os
import re
import sys

NET = 12.5e9          # bytes/s: 100 Gb/s
REGION = 4096 * 56    # bytes: the region of at most 4096 boxes of 56 bytes (docs/parallel.md)
# bytes per source (D + 2 values of 4 bytes: position, mass, type) or ghost (D positions), float
SOURCE = {"real_gas": 16, "real_gas_ends": 16, "log": 16, "plummer": 20, "plummer_weak": 20}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def loop(log):
    m = re.findall(r"timing: (\S+) s in the loop, (\d+) steps", log)
    return (float(m[-1][0]), int(m[-1][1])) if m else (None, None)


def sections(log):
    return {m[0].strip(): (float(m[1]), float(m[2]))
            for m in re.findall(r"^  (\S.*?)\s+([0-9.]+)\s+([0-9.]+)\s*$", log, re.M)}


def main(out):
    runs = sorted({os.path.basename(d) for d in glob.glob(os.path.join(out, "*-*"))
                   if os.path.isdir(d)})
    step, src, ghosts = {}, {}, {}
    for run in runs:
        row, g = run.rsplit("-", 1)
        g = int(g)
        log = read(os.path.join(out, run, "log.txt"))
        stats = read(os.path.join(out, run + ".log"))
        t, n = loop(log)
        if t is None:
            continue
        step[row, g] = 1e3 * t / n
        print(f"step_ms {row} {g} {step[row, g]:.2f}")
        ex = re.findall(r"^rank (\d+): tree exchange \(.*?\): (\d+) owned, (\d+) sources received, "
                        r"(\d+) sent .*?; (\d+) evaluations (\S+) s: (.*) s$", stats, re.M)
        if ex:
            src[row, g] = [int(e[2]) for e in ex]
            print(f"sources {row} {g} min {min(src[row, g])} max {max(src[row, g])}")
            r0 = next(e for e in ex if e[0] == "0")
            ev, total = int(r0[4]), float(r0[5])
            part = {k.strip(): float(v) for k, v in re.findall(r"([a-z' ]+) ([0-9.]+)", r0[6])}
            own, sw = part["own tree"], part["sources' tree and walk"]
            print(f"exchange {row} {g} evals {ev} total_ms {1e3 * total / ev:.3f} "
                  f"own_ms {1e3 * own / ev:.3f} side_ms {1e3 * (total - own - sw) / ev:.3f} "
                  f"sources_ms {1e3 * sw / ev:.3f} region_s {part['region']:.3f} "
                  f"total_s {total:.3f}")
        dom = re.findall(r"^rank (\d+): (\d+) owned, (\d+) ghosts;", stats, re.M)
        if dom:
            r0 = next(d for d in dom if d[0] == "0")
            ghosts[row, g] = (int(r0[2]), int(r0[1]))
            print(f"ghosts {row} {g} rank0 {r0[2]} owned {r0[1]} "
                  f"pct {100 * int(r0[2]) / int(r0[1]):.2f}")
        sec = sections(log)
        done = re.findall(r"done: \d+ steps, \S+ steps/s, (\d+) force evaluations", log)
        if g == 1 and done and "neighbour build" in sec:
            force = sum(v[0] for k, v in sec.items() if k.startswith("force ") and k != "force walls")
            print(f"build_walk_1gpu {row} "
                  f"{1e3 * (force + sec['neighbour build'][0]) / int(done[-1]):.2f}")
        clusters = os.path.join(out, run, "clusters.csv")
        if os.path.exists(clusters) and "analysis" in sec:
            count = sum(1 for line in open(clusters) if line.strip()) - 1
            per = sec["analysis"][0] / count
            print(f"analysis {row} {g} per_s {per:.4f} pct_loop {sec['analysis'][1]:.1f} "
                  f"pct_200 {100 * per / (200 * step[row, g] / 1e3):.2f} count {count}")
    for (row, g), s in sorted(src.items()):
        if g != 2 or row not in SOURCE:
            continue
        lo, hi = min(s) * SOURCE[row], max(s) * SOURCE[row]
        extra = REGION if row.startswith("real_gas") else 0
        model(row, lo, hi, extra, step[row, g])
    if ("lj", 2) in ghosts:
        b = ghosts["lj", 2][0] * 12
        model("lj", b, b, 0, step["lj", 2])
    if ("all_pairs", 2) in step:
        n = re.findall(r"pardyn: (\d+) particles", read(os.path.join(out, "all_pairs-2", "log.txt")))
        if n:
            b = int(n[-1]) // 2 * 20
            model("all_pairs", b, b, 0, step["all_pairs", 2])


def model(row, lo, hi, extra, step_ms):
    ms = [1e3 * (b + extra) / NET for b in (lo, hi)]
    print(f"model {row} mb_lo {lo / 1e6:.3f} mb_hi {hi / 1e6:.3f} ms_lo {ms[0]:.4f} "
          f"ms_hi {ms[1]:.4f} step_ms {step_ms:.2f} pct_lo {100 * ms[0] / step_ms:.3f} "
          f"pct_hi {100 * ms[1] / step_ms:.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
