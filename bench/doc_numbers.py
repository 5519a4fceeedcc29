#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The measured numbers that README.md, docs/ and examples/ quote: measure them again, check them.

Every measured number in the Markdown is followed by an invisible marker naming its record,

    runs at 445<!--n:real_gas_2d.rate--> steps/s

and bench/numbers.toml holds, for each record, the command that measures it, the device it was
measured on, and how the number is picked from the command's output and written. This program

    bench/doc_numbers.py [--build DIR] [--device D] [ID ...]   measure (every measure of device D,
                                                                or the measures ID) and rewrite the
                                                                quoted numbers and the record
    bench/doc_numbers.py --check [--build DIR] [--no-exact]    change nothing: exit 1 if a quoted
                                                                number is stale or has no record
    bench/doc_numbers.py --plan --device D                     list D's measures and what each took

A measure that fails does not stop the others: every one is run, the numbers of those that
succeeded are written, the failures are listed at the end and the exit status is 1. A summary of
the seconds each command took closes the run (and is recorded as `seconds`, the estimate --plan
adds up for a device call). $PARDYN, when set, is the pardyn executable the commands use (default:
BUILD/bin/pardyn), so that under a wrapper that sets the library path, PARDYN=.gpu/build/bin/pardyn
works.

--check (scripts/check-docs runs it, ctest cli.docs) fails when a marker names no record, when a
record's number is quoted differently in two places, when a measure says nowhere where it was
measured, when a number that reads as a measurement has no marker (outside the pages the record
lists as unmigrated), and, for the measures of device "exact" (deterministic results: the same on
any machine with this build), when measuring again gives another number than the text quotes.
Timings (devices "cpu-2core", "h100", "h100x4") and the deterministic results too slow for every
check ("exact-long") are refreshed by running this program with their --device, which records the
date, the commit and the machine (the lead does it for the GPU numbers on the GPU machines).
docs/numbers.md says how to add a number.
"""
import argparse
import datetime
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "bench", "numbers.toml")
# A quoted number: a sign, digits with thousands commas and a decimal point, an optional power of
# ten written as ·10⁻⁶, and an optional second number after an en dash (a range).
_ONE = r"[0-9][0-9,]*(?:\.[0-9]+)?(?:·10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
NUMBER = rf"[−+]?{_ONE}(?:–[−+]?{_ONE})?"
MARK = re.compile(rf"({NUMBER})<!--n:([A-Za-z0-9_.-]+)-->")
BARE_MARK = re.compile(r"<!--n:([A-Za-z0-9_.-]+)-->")
BLOCK_MARK = re.compile(r"^\s*<!--n:([A-Za-z0-9_.-]+)-->\s*$")  # alone on its line, above a fence
SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# What reads as a measurement: a number before a rate, a time, a size, a speed-up or a percentage;
# and in a table, a number in a column whose heading names a rate, a time, an error, a size, a
# speed-up or a percentage (TABLE_HEAD). On a page not listed under `unmigrated` in the record,
# each one needs a marker: `<!--n:MEASURE.NAME-->`, or `<!--n:given-->` for a number that is not a
# measurement (a setting, a default, a threshold, a bound a test asserts, a size by design, a
# definition, another code's published figure). Numbers in code (fenced blocks, `spans`) and
# numbers without such a unit or column (counts, parameters, years, section numbers) are not checked.
UNIT = (r"(?:\s?(?:steps/s|interactions/s|particle-steps/s|pairs/s)| ?×| ?%"
        r"|\s(?:s|ms|µs|MB|GB|GiB|KiB|MiB)\b)")
MEASURED = re.compile(rf"(?<![\w.·/]){NUMBER}(<!--n:[A-Za-z0-9_.-]+-->)?(?={UNIT})")
TABLE_HEAD = re.compile(r"steps/s|interactions/s|/s\b|\bms\b|µs|\(s\)|\bseconds\b|error|"
                        r"\b(?:MB|GB|GiB)\b|%|×|speed-?up")
# A number in such a column, not a label ("4,096: ...", "10⁵: ...") or part of a name.
TABLE_NUMBER = re.compile(rf"(?<![\w.·/^−+-]){NUMBER}(?![\w.,:⁰¹²³⁴⁵⁶⁷⁸⁹⁻])"
                          r"(<!--n:[A-Za-z0-9_.-]+-->)?")
GIVEN = "given"


def doc_files():
    """The Markdown that quotes numbers: README.md, docs/*.md, examples/**/*.md."""
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.md"), recursive=True))
    return files


def load_record():
    with open(RECORD, "rb") as f:
        rec = tomllib.load(f)
    load_record.unmigrated = rec.get("unmigrated", [])
    measures = {}
    for m in rec.get("measure", []):
        if m["id"] in measures:
            raise SystemExit(f"{RECORD}: measure '{m['id']}' twice")
        measures[m["id"]] = m
    return measures


def fmt(values, spec):
    """Writes the picked values as the docs quote them (a minus as U+2212)."""
    if spec.startswith("range:"):
        inner = spec[len("range:"):]
        lo, hi = fmt([min(values)], inner), fmt([max(values)], inner)
        return lo if lo == hi else f"{lo}–{hi}"
    if spec.startswith("median:"):
        v = sorted(values)
        n = len(v)
        med = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
        return fmt([med], spec[len("median:"):])
    if len(values) != 1:
        raise ValueError(f"format '{spec}' takes one value, the command gave {len(values)}")
    x = values[0]
    if spec.startswith("sci"):  # sci2: 6.3·10⁻⁶ (two significant digits)
        digits = int(spec[3:])
        if x == 0:
            return "0"
        e = math.floor(math.log10(abs(x)))
        m = round(x / 10**e, digits - 1)
        if abs(m) >= 10:
            m, e = m / 10, e + 1
        text = f"{m:.{digits - 1}f}·10{str(e).translate(SUPER)}"
    elif spec.startswith("sig"):  # sig3: three significant digits, no exponent
        digits = int(spec[3:])
        if x == 0:
            return "0"
        e = math.floor(math.log10(abs(x)))
        x = round(x, digits - 1 - e)
        e = math.floor(math.log10(abs(x)))  # 0.0996 rounds to 0.10
        text = f"{x:.{max(0, digits - 1 - e)}f}"
    else:
        text = format(x, spec)
    return text.replace("-", "−")


class MeasureError(Exception):
    """A measure's command failed, or its output lacks a number the record picks."""


def measure(m, build, scratch):
    """Runs a measure's command; returns {name: text} for its values (MeasureError if it fails)."""
    env = dict(os.environ)
    env["BUILD"] = build
    env["PARDYN"] = os.environ.get("PARDYN") or os.path.join(build, "bin", "pardyn")
    env["OUT"] = os.path.join(scratch, m["id"])
    os.makedirs(env["OUT"], exist_ok=True)
    print(f"doc_numbers: {m['id']}: {m['command']}", flush=True)
    r = subprocess.run(["bash", "-c", m["command"]], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise MeasureError(f"the command failed ({r.returncode}):\n"
                           f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    out = r.stdout + r.stderr
    texts = {}
    for name, v in m["values"].items():
        found = re.findall(v["pick"], out, re.MULTILINE)
        if not found:
            raise MeasureError(f"{name}: '{v['pick']}' found nothing in:\n{out[-3000:]}")
        if v["format"] == "text":  # a block of output, quoted as a fenced block
            texts[name] = found[-1].rstrip("\n")
            continue
        vals = [float(x.replace(",", "")) for x in found]
        if v.get("invert"):
            vals = [1 / x for x in vals]
        vals = [x * v.get("scale", 1) for x in vals]
        try:
            texts[name] = fmt(vals if v.get("all") else vals[-1:], v["format"])
        except ValueError as e:
            raise MeasureError(f"{name}: {e}") from None
    return texts


def prose(text):
    """Yields (line number, start, end) of the stretches of Markdown outside code (fenced blocks,
    `spans`), where markers count: an example of a marker in code is not one."""
    fence = None
    pos = 0
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
        elif m:
            fence = m.group(1)
        else:
            at = 0
            for span in re.finditer(r"(`+).*?\1", line):
                yield n, pos + at, pos + span.start()
                at = span.end()
            yield n, pos + at, pos + len(line)
        pos += len(line) + 1


def table_cells(text):
    """Yields (line number, heading, cell text) for each body cell of the Markdown tables outside
    fenced blocks (code spans blanked out, so that a `|` or a number in code counts for nothing)."""
    lines = text.split("\n")
    inside = set(n for n, _, _ in prose(text))
    head = None
    for n, line in enumerate(lines, 1):
        if n not in inside or not line.lstrip().startswith("|"):
            head = None
            continue
        plain = re.sub(r"(`+).*?\1", lambda m: " " * len(m.group(0)), line)
        cells = [c.strip() for c in plain.strip().strip("|").split("|")]
        if head is None:
            head = cells
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            for h, c in zip(head, cells):
                yield n, h, c


def unmarked(text, rel):
    """The numbers of a page that read as measurements and have no marker: (line, number)."""
    found = []
    for n, a, b in prose(text):
        for m in MEASURED.finditer(text[a:b]):
            if not m.group(1):
                found.append((n, m.group(0)))
    for n, head, cell in table_cells(text):
        if TABLE_HEAD.search(head):
            for m in TABLE_NUMBER.finditer(cell):
                if not m.group(1) and (n, m.group(0)) not in found:
                    found.append((n, m.group(0)))
    return sorted(found)


def quoted(files, unmigrated=()):
    """Every marker: {id: [(file, line, text)]}; and the problems: markers without a number, and
    measured-looking numbers without a marker on the pages not listed as unmigrated."""
    out, bad = {}, []
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(path, ROOT)
        if rel not in unmigrated:
            for n, number in unmarked(text, rel):
                bad.append(f"{rel}:{n}: '{number}' reads as a measured number but names "
                           f"no record: add <!--n:MEASURE.NAME--> after it, or "
                           f"<!--n:given--> if it is not a measurement (docs/numbers.md)")
        for n, a, b in prose(text):
            part = text[a:b]
            numbered = {m.start(2) - 6 for m in MARK.finditer(part)}
            for m in MARK.finditer(part):
                if m.group(2) != GIVEN:
                    out.setdefault(m.group(2), []).append((path, n, m.group(1)))
            for m in BARE_MARK.finditer(part):
                if m.start() not in numbered and not BLOCK_MARK.match(part):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: marker {m.group(1)} "
                               f"follows no number")
        for key, n, body in blocks(text):
            out.setdefault(key, []).append((path, n, body))
    return out, bad


def blocks(text):
    """Yields (id, line, content) of each fenced block that a marker line right above names: its
    content is a measured output, quoted whole (format "text")."""
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        m = BLOCK_MARK.match(lines[i])
        f = re.match(r"^(`{3,})", lines[i + 1])
        if m and f:
            end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith(f.group(1))),
                       None)
            if end is not None:
                yield m.group(1), i + 3, "\n".join(lines[i + 2:end])


def check(build, exact):
    measures = load_record()
    marks, bad = quoted(doc_files(), load_record.unmigrated)
    for page in load_record.unmigrated:
        if not os.path.isfile(os.path.join(ROOT, page)):
            bad.append(f"bench/numbers.toml: unmigrated page {page} does not exist")
    for key, places in sorted(marks.items()):
        mid, _, name = key.rpartition(".")
        where = f"{os.path.relpath(places[0][0], ROOT)}:{places[0][1]}"
        if mid not in measures or name not in measures[mid].get("values", {}):
            bad.append(f"{where}: {places[0][2]} is marked '{key}', which bench/numbers.toml does "
                       f"not record (add a measure: docs/numbers.md)")
            continue
        texts = {t for _, _, t in places}
        if len(texts) > 1:
            bad.append(f"{key} is quoted as " + ", ".join(
                f"{t} ({os.path.relpath(p, ROOT)}:{n})" for p, n, t in places))
    for mid, m in measures.items():
        for key in ("command", "device", "what"):
            if not m.get(key):
                bad.append(f"bench/numbers.toml: measure '{mid}' has no {key}")
        if m.get("device") != "exact" and not m.get("measured"):
            bad.append(f"bench/numbers.toml: measure '{mid}' does not say when and where it was "
                       f"measured ('measured')")
        for name in m.get("values", {}):
            if f"{mid}.{name}" not in marks:
                bad.append(f"bench/numbers.toml: {mid}.{name} is quoted nowhere")
    if exact:
        scratch = tempfile.mkdtemp(prefix="doc_numbers.")
        try:
            for mid, m in measures.items():
                if m.get("device") != "exact":
                    continue
                if m.get("needs") and not shutil.which(m["needs"]):
                    print(f"doc_numbers: {mid}: not measured again: needs '{m['needs']}'")
                    continue
                try:
                    texts = measure(m, build, scratch)
                except MeasureError as e:
                    bad.append(f"bench/numbers.toml: measure '{mid}': {e}")
                    continue
                for name, text in texts.items():
                    for path, n, t in marks.get(f"{mid}.{name}", []):
                        if t != text:
                            bad.append(f"{os.path.relpath(path, ROOT)}:{n}: {t} is stale: "
                                       f"'{m['command']}' gives {text} ({mid}.{name}; "
                                       f"bench/doc_numbers.py {mid} rewrites it)")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    for line in bad:
        print(line)
    n_marks = sum(len(p) for p in marks.values())
    if not bad:
        print(f"doc_numbers: {n_marks} quoted numbers of {len(measures)} measures agree with "
              f"bench/numbers.toml" + (", the exact ones measured again" if exact else ""))
    return 1 if bad else 0


def rewrite_docs(new):
    """Replaces the quoted numbers whose marker is in `new` ({id: text})."""
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        pieces, last = [], 0
        for _, a, b in prose(text):
            pieces.append(text[last:a])
            pieces.append(MARK.sub(
                lambda m: new.get(m.group(2), m.group(1)) + f"<!--n:{m.group(2)}-->", text[a:b]))
            last = b
        pieces.append(text[last:])
        changed = "".join(pieces)
        for key, _, body in list(blocks(changed)):
            if key in new and new[key] != body:
                mark = f"<!--n:{key}-->\n"
                at = changed.index(mark)
                start = changed.index("\n", at + len(mark)) + 1  # after the opening fence
                changed = changed[:start] + new[key] + changed[start + len(body):]
        if changed != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(changed)
            print(f"doc_numbers: rewrote {os.path.relpath(path, ROOT)}")


def stamp_record(stamps):
    """Sets `measured` and `seconds` of the measures in `stamps` ({id: (note or None, seconds)})
    in bench/numbers.toml, the file's text kept (a note of None leaves `measured` as it is)."""
    with open(RECORD, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, current = [], None
    for line in lines:
        m = re.match(r'^id = "([^"]+)"', line)
        if m:
            current = m.group(1)
        if current in stamps and re.match(r"^seconds = [0-9.]+\s*$", line):
            continue  # written again after `measured` (a value named seconds stays)
        if current in stamps and line.startswith("measured = "):
            note, seconds = stamps[current]
            out.append(f'measured = "{note}"' if note is not None else line)
            out.append(f"seconds = {seconds:.0f}")
            continue
        out.append(line)
    with open(RECORD, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


def machine():
    """The machine, in words: cores and CPU, and the GPUs if any ("4× NVIDIA H100 80GB HBM3")."""
    def sh(cmd):
        return subprocess.run(["bash", "-c", cmd], text=True, capture_output=True).stdout.strip()
    host = sh("echo $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)")
    gpus = sh("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null").splitlines()
    if gpus:
        host += f", {len(gpus)}× {gpus[0]}" if len(gpus) > 1 else f", {gpus[0]}"
    return host


def plan(measures, ids):
    """What a device call will run: each measure with the seconds it took when last measured."""
    total = 0
    for mid in ids:
        sec = measures[mid].get("seconds")
        total += sec or 0
        print(f"  {mid:28s} {measures[mid]['device']:10s} "
              + (f"{sec:6.0f} s" if sec is not None else "     ? s"))
    print(f"  {'total':28s} {'':10s} {total:6.0f} s (measures without a record of their time "
          f"not counted)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*", help="measures to run (default: every one of --device)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="pardyn's build folder")
    ap.add_argument("--device", help="measure every measure of this device: exact, exact-long, "
                    "cpu-2core, h100, h100x4")
    ap.add_argument("--check", action="store_true", help="check, change nothing")
    ap.add_argument("--no-exact", action="store_true", help="with --check: measure nothing")
    ap.add_argument("--plan", action="store_true", help="list the measures and their last times")
    ap.add_argument("--keep", help="keep the commands' output in this folder")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.check:
        return check(build, not a.no_exact)
    measures = load_record()
    ids = a.ids or [i for i, m in measures.items() if a.device and m["device"] == a.device]
    if not ids:
        ap.error("name measures, or a --device: " + ", ".join(sorted(
            {m["device"] for m in measures.values()})))
    unknown = [i for i in ids if i not in measures]
    if unknown:
        ap.error("no such measure: " + ", ".join(unknown))
    if a.plan:
        plan(measures, ids)
        return 0
    scratch = a.keep or tempfile.mkdtemp(prefix="doc_numbers.")
    load = os.getloadavg()[1]  # the machine's load when the measures start (5-minute average)
    new, took, failed, skipped = {}, {}, {}, []
    for mid in ids:
        m = measures[mid]
        if m.get("needs") and not shutil.which(m["needs"]):
            print(f"doc_numbers: {mid}: not measured: needs '{m['needs']}'", flush=True)
            skipped.append(mid)
            continue
        t0 = time.monotonic()
        try:
            texts = measure(m, build, scratch)
        except MeasureError as e:
            failed[mid] = str(e)
            print(f"doc_numbers: {mid}: FAILED: {e}", flush=True)
            continue
        finally:
            took[mid] = time.monotonic() - t0
        for name, text in texts.items():
            new[f"{mid}.{name}"] = text
            print(f"  {mid}.{name} = {text}", flush=True)
    rewrite_docs(new)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip() or "no git"
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                      text=True, capture_output=True).stdout.strip():
        commit += " with uncommitted changes"
    note = (f"{datetime.date.today().isoformat()}, commit {commit}, {machine()}, "
            f"load average {load:.1f} at the start")
    stamp_record({i: (note if measures[i]["device"] != "exact" else None, took[i])
                  for i in took if i not in failed})
    if not a.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\ndoc_numbers: seconds per measure")
    for mid in ids:
        state = ("skipped" if mid in skipped else "FAILED" if mid in failed else "ok")
        print(f"  {mid:28s} {measures[mid]['device']:10s} {took.get(mid, 0):7.1f} s  {state}")
    print(f"  {'total':28s} {'':10s} {sum(took.values()):7.1f} s")
    if failed:
        print(f"doc_numbers: {len(failed)} measure(s) failed, their numbers left as they were: "
              + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
