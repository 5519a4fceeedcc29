#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fuzzes pardyn's input handling: mutated scenarios, CSV files and --set arguments.

Every scenario of examples/ and tests/ (shrunk to a few particles and steps), plus a few built here
(a CSV file generator, integrators, thermostats, grid fields), is mutated with a deterministic seed:
values replaced (huge, negative, zero, NaN, strings, wrong types), keys deleted or duplicated,
tables duplicated, junk bytes inserted, the text truncated; CSV files likewise. Each case runs
`pardyn validate` and, when that passes, a short `pardyn run`. Every outcome must be success or a
clean error: exit 1 (2 for a bad command line) with one "pardyn: error: ..." message, never a
signal, a hang (each command has a time limit), an "internal error" or exit 3, and never garbled
output (NUL bytes or control characters in a message, a message cut short, a thermo.csv row of the
wrong width, a run.pvd that is not XML or lists a missing file, a config.toml that is not TOML).

Usage: fuzz_inputs.py PARDYN SOURCE_DIR WORK_DIR [--cases N] [--seed S] [--jobs J]
Prints one line per failure and a summary; exits 1 when any case failed.
"""

import argparse
import concurrent.futures
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET

TIMEOUT = 60  # seconds per command: every run is a few particles and steps, far below this

# Values a mutation puts in place of a scenario's value.
INTS = ["0", "-1", "1", "2", "100", "-9223372036854775808", "9223372036854775807",
        "99999999999999999999", "4294967297", "2147483648", "1000000000000", "+7", "0x10"]
FLOATS = ["0.0", "-0.0", "-1.5", "1e-300", "1e308", "1e400", "-1e400", "nan", "inf", "-inf",
          "5e-324", "1e-9", "3.0e+30", "0.5", "1e5"]
OTHERS = ['"text"', '""', '"\\u0000"', '"a\\nb"', "true", "false", "[]", "[1, 2, 3]", "[0, 0, 0]",
          "[1e400]", "[-1, -2]", '[1.0, "x"]', "{ a = 1 }", "1979-05-27T07:32:00Z", '"periodic"',
          '"wall"', '"open"', '"tree"', '"cell_list"', '"all_pairs"', '"file"', '"/dev/zero"',
          '"."', '"gravity"', '"lennard_jones"', '"dopri5"', '"rk4"', '"ab5"', '"float"', "[[1]]",
          '"' + "x" * 300 + '"']
JUNK = [b"\x00", b"\xff\xfe", b"\x1b[2J", b"[[", b"]]", b"=", b'"', b"\n[simulation]\n",
        b"\n[[particles]]\n", b"\t", b"\r", b"\xc3\x28", b"#", b"{", b"\\u0000", b"''' "]

# Scenarios written here, to reach what the examples do not: the CSV file generator, other
# integrators and modifiers, grid fields, uniform fields.
CSV_2D = "# two particles and more\nx, y, vx, vy, mass, type\n" + "".join(
    f"{0.5 * i:.3f}, {0.25 * (i % 3):.3f}, 0.0, {0.01 * i:.3f}, 1.0, {i % 2}\n" for i in range(12))
CSV_3D = "x,y,z,vx,vy,vz,mass\n" + "".join(
    f"{0.3 * i:.2f},{0.2 * (i % 4):.2f},{0.1 * (i % 5):.2f},0,0,0,{0.5 + 0.1 * i:.2f}\n"
    for i in range(10))
BUILTIN = {
    "file_2d.toml": """[simulation]
dimension = 2
steps = 4
[box]
lo = [-10.0, -10.0]
hi = [10.0, 10.0]
boundary = "wall"
[[particles]]
generator = "file"
path = "particles.csv"
[[potential]]
type = "lennard_jones"
rcut = 2.5
scheme = "cell_list"
[integrator]
type = "leapfrog"
dt = 0.001
[[output]]
type = "thermo"
interval = 1
[[output]]
type = "vtk"
interval = 2
""",
    "file_3d.toml": """[simulation]
steps = 3
precision = "float"
[[particles]]
generator = "file"
path = "particles3.csv"
[[potential]]
type = "gravity"
eps = 0.05
scheme = { type = "tree", theta = 0.5 }
[integrator]
type = "rk4"
dt = 0.01
[[output]]
type = "thermo"
interval = 1
""",
    "mixed_2d.toml": """[simulation]
dimension = 2
steps = 5
seed = 5
[box]
lo = [0.0, 0.0]
hi = [8.0, 8.0]
boundary = ["periodic", "wall"]
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.0
temperature = 0.5
[[potential]]
type = "lennard_jones"
rcut = 2.0
scheme = { type = "cell_list", skin = 0.2 }
[[potential]]
type = "uniform_field"
g = [0.0, -0.1]
[integrator]
type = "yoshida4"
dt = 0.002
[[modifier]]
type = "langevin"
temperature = 0.5
tau = 0.1
[[output]]
type = "grid_fields"
interval = 2
cells = [4, 4]
[[output]]
type = "thermo"
interval = 1
columns = ["n", "density"]
""",
    "adaptive_3d.toml": """[simulation]
steps = 4
end_time = 0.05
[[particles]]
generator = "plummer"
count = 16
[[particles]]
generator = "uniform"
count = 8
region_lo = [2.0, 2.0, 2.0]
region_hi = [3.0, 3.0, 3.0]
min_spacing = 0.1
[[potential]]
type = "gravity"
eps = 0.01
[integrator]
type = "dopri5"
dt = 0.001
[[modifier]]
type = "berendsen"
temperature = 0.1
[[output]]
type = "checkpoint"
interval = 2
[[output]]
type = "clusters"
distance = 0.5
""",
}


def shrink(text):
    """A scenario cut down to a few particles and steps (its structure kept)."""
    text = re.sub(r"(?m)^(\s*steps\s*=\s*)\d+", r"\g<1>4", text)
    text = re.sub(r"(?m)^(\s*count\s*=\s*)(\d+)", lambda m: m.group(1) + str(min(int(m.group(2)), 24)), text)
    # Lattices that fill their box: a box of a few lattice cells (the cut-off stays below half a side).
    text = text.replace("33.591924", "5.0387886").replace("10.0776", "5.0388")
    text = text.replace("[128.43567, 111.22856]", "[12.843567, 11.122856]")
    text = text.replace("hi = [20, 20.784609690826528]", "hi = [10, 10.392304845413264]")
    text = re.sub(r'(?m)^(\s*output\s*=\s*)".*"', r'\g<1>"out"', text)
    return text


def as_text(data):
    """Bytes as a str that turns back into the same bytes (invalid UTF-8 kept as surrogates)."""
    return data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else data


def as_bytes(text):
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def mutate_toml(rng, text):
    text = as_text(text)
    lines = text.split("\n")
    keyed = [i for i, l in enumerate(lines) if re.match(r"\s*[A-Za-z_]+\s*=", l)]
    headers = [i for i, l in enumerate(lines) if re.match(r"\s*\[", l)]
    kind = rng.choice(["value", "value", "value", "value", "delete", "dupkey", "duptable", "junk",
                       "truncate", "rename", "addkey", "multi"])
    what = kind
    if kind == "multi":
        for _ in range(rng.randint(2, 4)):
            text, w = mutate_toml(rng, text)
            what += "+" + w
        return text, what
    if kind == "value" and keyed:
        i = rng.choice(keyed)
        key = lines[i].split("=", 1)[0]
        pool = rng.choice([INTS, FLOATS, OTHERS])
        value = rng.choice(pool)
        lines[i] = key + "= " + value
        what = f"value line {i + 1}: {key.strip()} = {value[:40]}"
    elif kind == "delete" and keyed:
        i = rng.choice(keyed)
        what = f"delete line {i + 1}: {lines[i].strip()[:40]}"
        del lines[i]
    elif kind == "dupkey" and keyed:
        i = rng.choice(keyed)
        lines.insert(i + 1, lines[i])
        what = f"duplicate key line {i + 1}"
    elif kind == "duptable" and headers:
        i = rng.choice(headers)
        end = next((h for h in headers if h > i), len(lines))
        block = lines[i:end]
        lines[end:end] = block
        what = f"duplicate table line {i + 1}: {lines[i].strip()}"
    elif kind == "rename" and keyed:
        i = rng.choice(keyed)
        key, rest = lines[i].split("=", 1)
        lines[i] = key.strip() + rng.choice(["s", "_", "X", ""]) + rng.choice(["", "x"]) + " =" + rest
        what = f"rename key line {i + 1}"
    elif kind == "addkey" and headers:
        i = rng.choice(headers)
        lines.insert(i + 1, rng.choice(["bogus = 1", "count = 5", "eps = 0.0", "type = 3",
                                        "scheme = \"tree\"", "interval = 0", "cells = [0, 0, 0]",
                                        "rcut = 5.0", "threads = 1000000000000"]))
        what = f"add key after line {i + 1}: {lines[i + 1]}"
    else:
        data = as_bytes(text)
        if kind == "truncate" or not data:
            cut = rng.randrange(len(data) + 1)
            return data[:cut], f"truncate at {cut}"
        at = rng.randrange(len(data) + 1)
        junk = (rng.choice(JUNK) if rng.random() < 0.7
                else bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))))
        return data[:at] + junk + data[at:], f"junk {junk!r} at byte {at}"
    return "\n".join(lines), what


def mutate_csv(rng, text):
    lines = text.split("\n")
    kind = rng.choice(["value", "value", "value", "junk", "truncate", "header", "fields", "empty",
                       "nul", "longline", "dupline", "bom"])
    if kind == "value" and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        fields = lines[i].split(",")
        j = rng.randrange(len(fields))
        fields[j] = rng.choice(["1e400", "-1e400", "nan", "inf", "", " ", "x", "1e-400", "0", "-1",
                                "99999999999999999999", "2147483648", "-2147483649", "1,5", "0x1p3",
                                "+", "--1", "1e", ".", "1.5.5", "\u00e9"])
        lines[i] = ",".join(fields)
        return "\n".join(lines), f"csv value line {i + 1} field {j}: {fields[j]!r}"
    if kind == "header":
        lines[1 if lines[0].startswith("#") else 0] = rng.choice(
            ["x, y", "x,y,z,vx,vy,vz,mass,mass", "a,b,c", "", "x,y,vx,vy,mass,type,z,vz", "\x00"])
        return "\n".join(lines), "csv header"
    if kind == "fields" and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        lines[i] += rng.choice([",1", ",,", ""]) if rng.random() < 0.5 else ""
        lines[i] = lines[i].rsplit(",", 1)[0] if rng.random() < 0.5 else lines[i]
        return "\n".join(lines), f"csv fields line {i + 1}"
    if kind == "empty":
        return rng.choice(["", "\n", "# only a comment\n"]), "csv empty"
    if kind == "nul":
        at = rng.randrange(len(text) + 1)
        return text[:at] + "\x00" + text[at:], f"csv NUL at {at}"
    if kind == "longline":
        return text + "1" * (2 << 20) + "\n", "csv line of 2 MiB"
    if kind == "dupline":
        return text + text, "csv twice (two headers)"
    if kind == "bom":
        return "\ufeff" + text, "csv BOM"
    data = as_bytes(text)
    if kind == "truncate":
        cut = rng.randrange(len(data) + 1)
        return data[:cut], f"csv truncate at {cut}"
    at = rng.randrange(len(data) + 1)
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
    return data[:at] + junk + data[at:], f"csv junk {junk!r} at {at}"


SET_ARGS = ["particles.99999999999999999999999.count=1", "particles.0.count=1e12",
            "particles.0.count=1000000000000", "simulation.threads=1000000000000",
            "simulation.threads=4294967297", "simulation.steps=-1", "simulation.steps=1e400",
            "box.hi=[1e400, 1, 1]", "potential.0.eps=nan", "integrator.dt=0", "integrator.dt=inf",
            "particles[0].count=0", "output.7.interval=1", "simulation.name=a\nb",
            "simulation.seed=99999999999999999999", "box.boundary=periodic", "a.b.c.d=1",
            "particles.0.generator=file", "potential.scheme=tree", "simulation.dimension=4",
            "simulation=1", "particles.0=3", "particles.-1.count=3", "particles..count=3",
            "simulation.precision=half", "box.lo=[]", "particles.0.offset=[1e308, 1e308, 1e308]"]


def check_error(rc, out, err, allowed=(1,)):
    """'' when the outcome is clean, else what is wrong."""
    text = err + out
    if rc < 0:
        return f"killed by signal {-rc}"
    if rc == 3 or b"internal error" in text or b"internal:" in text:
        return f"internal error (exit {rc})"
    if rc not in allowed:
        return f"exit {rc}"
    if b"\x00" in text:
        return "NUL byte in the output"
    try:
        err.decode("utf-8")
    except UnicodeDecodeError:
        return "the message is not UTF-8"
    if re.search(rb"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]", err):
        return "control characters in the message"
    if rc == 1:
        if not err.startswith(b"pardyn: error: ") or len(err) < 30:
            return "exit 1 without a 'pardyn: error: ...' message"
        if not err.endswith(b"\n"):
            return "the message is cut short (no final newline)"
    elif rc == 2 and len(err) < 10:
        return "exit 2 without a message"
    return ""


def check_output(folder):
    """'' when the run's files are whole, else what is wrong."""
    folder = pathlib.Path(folder)
    thermo = folder / "thermo.csv"
    if thermo.exists():
        rows = thermo.read_text().splitlines()
        if not rows:
            return "thermo.csv is empty"
        width = len(rows[0].split(","))
        last = -1
        for r in rows[1:]:
            fields = r.split(",")
            if len(fields) != width:
                return f"thermo.csv row of {len(fields)} fields under a header of {width}: {r[:60]}"
            try:
                step = int(fields[0])
                [float(f) for f in fields[1:]]
            except ValueError:
                return f"thermo.csv row that is not numbers: {r[:60]}"
            if step <= last:
                return f"thermo.csv steps not increasing: {step} after {last}"
            last = step
    for pvd in ("run.pvd", "fields.pvd"):
        p = folder / pvd
        if not p.exists():
            continue
        try:
            root = ET.parse(p).getroot()
        except ET.ParseError as e:
            return f"{pvd} is not XML: {e}"
        for ds in root.iter("DataSet"):
            f = folder / ds.get("file", "")
            if not f.is_file():
                return f"{pvd} lists {ds.get('file')}, which does not exist"
            try:
                ET.parse(f)
            except ET.ParseError:
                pass  # appended binary data: VTK's XML files are not all well-formed XML
    config = folder / "config.toml"
    if config.exists():
        try:
            tomllib.loads(config.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            return f"config.toml is not TOML: {e}"
    return ""


def run_cmd(cmd, cwd):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, b"", b""


def first_line(err):
    return err.decode("utf-8", "backslashreplace").strip().split("\n")[-1][:200]


def one_case(pardyn, case_dir, scenario, sets, allowed_validate=(1,)):
    """Runs validate, then (if valid) a short run; returns (outcome, problem, message)."""
    cmd = [pardyn, "validate", scenario] + [a for s in sets for a in ("--set", s)]
    rc, out, err = run_cmd(cmd, case_dir)
    if rc is None:
        return "hang", f"validate did not end within {TIMEOUT} s", ""
    if rc != 0:
        problem = check_error(rc, out, err, allowed_validate)
        return "refused", problem and f"validate: {problem}: {err[:300]!r}", first_line(err)
    runset = ["simulation.steps=4"] if not any(s.startswith("simulation.steps") for s in sets) else []
    cmd = [pardyn, "run", scenario, "-q", "-o", "out"] + [a for s in sets + runset for a in ("--set", s)]
    rc, out, err = run_cmd(cmd, case_dir)
    if rc is None:
        return "hang", f"run did not end within {TIMEOUT} s", ""
    if rc != 0:
        problem = check_error(rc, out, err)
        if not problem:
            problem = check_output(os.path.join(case_dir, "out"))
        return ("run-refused", problem and f"run (validate passed): {problem}: {err[:300]!r}",
                first_line(err))
    return "ran", check_output(os.path.join(case_dir, "out")), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pardyn")
    ap.add_argument("source")
    ap.add_argument("work")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--log", help="write every case's outcome and message to this file")
    args = ap.parse_args()
    pardyn = os.path.abspath(args.pardyn)
    src = pathlib.Path(args.source)
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    bases = {}
    beside = {}
    for p in sorted(list(src.glob("examples/**/*.toml")) + list(src.glob("tests/**/*.toml"))):
        if "plugin_template" in str(p):
            continue  # needs the template's own plugin, built by its own test
        if "tests/mpi/scenarios" in str(p):
            continue  # the MPI tests' own (test plugins, several ranks, completed by the test)
        bases[str(p.relative_to(src))] = shrink(p.read_text())
        # Data files beside the scenario that it names (a table law's `file = "lj.table"`) go
        # into the case's folder with it.
        for f in p.parent.iterdir():
            if f.is_file() and f.suffix not in (".toml", ".md", ".png", ".py", ".gp") and \
                    f'"{f.name}"' in bases[str(p.relative_to(src))]:
                beside.setdefault(str(p.relative_to(src)), {})[f.name] = f.read_text()
    for name, text in BUILTIN.items():
        bases["builtin/" + name] = text
    names = sorted(bases)
    csvs = {"particles.csv": CSV_2D, "particles3.csv": CSV_3D}

    rng = random.Random(args.seed)
    cases = []
    # The unmutated bases first: each must validate and run (the shrinking kept them valid).
    for name in names:
        cases.append((name, bases[name], {**csvs, **beside.get(name, {})}, [], "unmutated", True))
    while len(cases) < args.cases:
        name = rng.choice(names)
        text, csv_files, sets = bases[name], {**csvs, **beside.get(name, {})}, []
        r = rng.random()
        if r < 0.62:
            text, what = mutate_toml(rng, text)
        elif r < 0.85:
            if "file" not in name:
                name = rng.choice([n for n in names if "file_" in n])
                text = bases[name]
            target = "particles.csv" if "2d" in name else "particles3.csv"
            csv_files[target], what = mutate_csv(rng, csv_files[target])
            if rng.random() < 0.1:
                special = rng.choice(["/dev/zero", "/dev/null", ".", "missing.csv", "fifo.csv"])
                text = text.replace(f'"{target}"', f'"{special}"')
                what = f"csv path {special}"
        elif r < 0.95:
            sets = [rng.choice(SET_ARGS)]
            what = "--set " + sets[0]
        else:
            what = rng.choice(["scenario is a folder", "scenario is /dev/null", "scenario is /dev/zero",
                               "scenario is binary", "scenario is empty"])
        cases.append((name, text, csv_files, sets, what, False))

    def run_case(index):
        name, text, csv_files, sets, what, must_pass = cases[index]
        case_dir = work / f"case{index:04d}"
        case_dir.mkdir()
        for f, content in csv_files.items():
            (case_dir / f).write_bytes(as_bytes(content))
        os.mkfifo(case_dir / "fifo.csv")
        scenario = "scenario.toml"
        (case_dir / scenario).write_bytes(as_bytes(text))
        if what == "scenario is a folder":
            scenario = "."
        elif what.startswith("scenario is /dev/"):
            scenario = what.split()[-1]
        elif what == "scenario is binary":
            (case_dir / scenario).write_bytes(bytes(random.Random(index).randrange(256) for _ in range(300)))
        elif what == "scenario is empty":
            (case_dir / scenario).write_bytes(b"")
        t0 = time.monotonic()
        outcome, problem, message = one_case(pardyn, str(case_dir), scenario, sets,
                                    allowed_validate=(1, 2) if sets else (1,))
        if must_pass and outcome != "ran":
            problem = problem or f"the unmutated base did not run ({outcome})"
        elapsed = time.monotonic() - t0
        if not problem:
            shutil.rmtree(case_dir, ignore_errors=True)
        return index, name, what, outcome, problem, message, elapsed

    start = time.monotonic()
    counts, failures = {}, []
    log = open(args.log, "w") if args.log else None
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for index, name, what, outcome, problem, message, elapsed in pool.map(run_case,
                                                                               range(len(cases))):
            counts[outcome] = counts.get(outcome, 0) + 1
            if log:
                log.write(f"case{index:04d} {name} [{what!r}] {outcome} {elapsed:.1f}s: {message}\n")
            if problem:
                failures.append(index)
                print(f"FAIL case{index:04d} {name} [{what}]: {problem}", flush=True)
    total = time.monotonic() - start
    print(f"fuzz: {len(cases)} cases (seed {args.seed}) in {total:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f"; {len(failures)} failed" + (f" (kept in {work})" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
