# SPDX-License-Identifier: BSD-3-Clause
"""The Python module against what the command line does (docs/python.md)."""
import csv
import os
import pathlib
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import pardyn
from conftest import BUILD, ROOT


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def test_version_and_plugins():
    assert pardyn.__version__
    plugins = {(p["kind"], p["name"]): p for p in pardyn.plugins()}
    lj = plugins[("potential", "lennard_jones")]
    names = [q["name"] for q in lj["parameters"]]
    assert "rcut" in names and "epsilon" in names
    assert lj["doc"] and lj["summary"]
    assert 2 in lj["dimensions"] and 3 in lj["dimensions"]
    assert ("integrator", "velocity_verlet") in plugins
    assert ("observer", "thermo") in plugins


def test_file_scenario_with_overrides(tmp_path):
    sim = pardyn.Simulation(ROOT / "examples/lammps/lj2d.toml",
                            set={"simulation.steps": 20, "simulation.output": str(tmp_path / "o")})
    assert sim.n == 10000 and sim.dimension == 2 and sim.backend == "cpu"
    assert sim.steps == 20 and sim.step == 0
    assert sim.run() == 20
    assert sim.step == 20 and sim.time == pytest.approx(20 * 0.005)
    assert sim.positions.shape == (10000, 2)
    assert np.array_equal(sim.ids, np.arange(10000))
    sim.close()
    header, rows = read_csv(tmp_path / "o/thermo.csv")
    assert [r[0] for r in rows] == [0, 20]


def test_dict_gives_the_same_run_as_its_toml_file(tmp_path, lj2d):
    text = pardyn.to_toml(lj2d)
    f = tmp_path / "s.toml"
    f.write_text(text)
    a = pardyn.Simulation(lj2d, output=str(tmp_path / "a"))
    b = pardyn.Simulation(str(f), output=str(tmp_path / "b"))
    a.run(60)
    b.run(60)
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.velocities, b.velocities)


def test_a_formula_law_in_a_dict_runs_as_its_built_in_law(tmp_path, lj2d, monkeypatch):
    # type = "expression" with its `parameters` as a nested dict (a TOML sub-table); the compiled
    # formula lands in a cache of the test's own.
    monkeypatch.setenv("PARDYN_CACHE_DIR", str(tmp_path / "cache"))
    formula = dict(lj2d, potential=[{"type": "expression", "rcut": 2.5,
                                     "energy": "4*epsilon*((sigma/r)^12 - (sigma/r)^6)",
                                     "parameters": {"epsilon": 1.0, "sigma": 1.0}}])
    a = pardyn.Simulation(formula, output=str(tmp_path / "formula"))
    b = pardyn.Simulation(lj2d, output=str(tmp_path / "builtin"))
    a.run(60)
    b.run(60)
    # The same law in other arithmetic (c0 r^-12 + c1 r^-6 against r^-6 (c12 r^-6 - c6)): the
    # trajectories agree to rounding over 60 steps.
    assert np.max(np.abs(a.positions - b.positions)) < 1e-12  # measured: 3.6e-15
    assert a.thermo()["potential"] == pytest.approx(b.thermo()["potential"], rel=1e-11)
    a.close()
    b.close()


def test_a_formula_law_in_a_dict_runs_on_the_gpu_as_its_built_in_law(tmp_path, lj2d,
                                                                      monkeypatch):
    # The same dict with backend = "cuda": the formula's kernels compiled by NVRTC into the test's
    # own cache, against the built-in law on the GPU.
    monkeypatch.setenv("PARDYN_CACHE_DIR", str(tmp_path / "cache"))
    lj2d["simulation"]["backend"] = "cuda"
    formula = dict(lj2d, potential=[{"type": "expression", "rcut": 2.5,
                                     "energy": "4*epsilon*((sigma/r)^12 - (sigma/r)^6)",
                                     "parameters": {"epsilon": 1.0, "sigma": 1.0}}])
    try:
        b = pardyn.Simulation(lj2d, output=str(tmp_path / "builtin"))
    except pardyn.Error as e:
        pytest.skip("no CUDA device here: %s" % str(e).splitlines()[0])
    a = pardyn.Simulation(formula, output=str(tmp_path / "formula"))
    assert a.backend == "cuda"
    a.run(60)
    b.run(60)
    # The same traversal kernels, the law in other arithmetic: rounding apart over 60 steps (the
    # CPU's bound above; the precision is the scenario's, double).
    assert np.max(np.abs(a.positions - b.positions)) < 1e-12
    assert a.thermo()["potential"] == pytest.approx(b.thermo()["potential"], rel=1e-11)
    a.close()
    b.close()


def test_a_run_in_pieces_is_the_run_in_one(tmp_path, lj2d):
    one = pardyn.Simulation(lj2d, output=str(tmp_path / "one"))
    one.run(150)
    pieces = pardyn.Simulation(lj2d, output=str(tmp_path / "pieces"))
    for k in (1, 29, 70, 50):
        pieces.run(k)
    assert pieces.step == 150
    assert np.array_equal(one.positions, pieces.positions)
    assert np.array_equal(one.velocities, pieces.velocities)
    one.close()
    pieces.close()
    # Observations at the same steps (every 50, and the final state at 150 once).
    _, r1 = read_csv(tmp_path / "one/thermo.csv")
    _, r2 = read_csv(tmp_path / "pieces/thermo.csv")
    assert [r[0] for r in r2] == [0, 50, 100, 150]
    assert r1 == r2


def test_thermo_has_the_columns_of_thermo_csv(tmp_path, lj2d):
    sim = pardyn.Simulation(lj2d)
    sim.run(50)  # an observation step
    t = sim.thermo()
    sim.close()
    header, rows = read_csv(tmp_path / "out/thermo.csv")
    assert list(t.keys()) == header
    last = dict(zip(header, rows[-1]))
    assert last["step"] == 50
    for k in header:
        assert t[k] == pytest.approx(last[k], rel=1e-15, abs=1e-300), k
    # The history has every observation: thermo.csv's rows and the progress lines' steps
    # (a tenth of simulation.steps = 200).
    h = sim.thermo_history()
    assert list(h["step"]) == [0, 20, 40, 50]
    assert h["total"][-1] == t["total"]
    assert [h["total"][list(h["step"]).index(r[0])] for r in rows] == [r[header.index("total")]
                                                                         for r in rows]


def test_setters_upload_and_forces_follow(tmp_path, lj2d):
    sim = pardyn.Simulation(lj2d)
    v = sim.velocities
    sim.velocities = np.zeros_like(v)
    assert sim.thermo()["kinetic"] == 0.0
    f0 = sim.forces
    assert np.abs(f0.sum(axis=0)).max() < 1e-9  # Newton's third law, periodic LJ
    x = sim.positions
    x[0, 0] += 0.05  # move one particle: its force changes
    sim.positions = x
    assert np.array_equal(sim.positions, x)
    f1 = sim.forces
    assert not np.allclose(f1[0], f0[0])
    assert np.abs(f1.sum(axis=0)).max() < 1e-9
    m = sim.masses
    sim.masses = 2 * m
    assert np.array_equal(sim.masses, 2 * m)
    sim.types = np.zeros(sim.n, dtype=int)
    with pytest.raises(ValueError, match=r"shape \(256, 2\)"):
        sim.positions = np.zeros((3, 2))
    bad = sim.positions
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        sim.positions = bad
    with pytest.raises(ValueError, match="> 0"):
        sim.masses = np.zeros(sim.n)
    sim.run(10)
    assert np.isfinite(sim.thermo()["total"])


def test_forces_are_minus_the_gradient(tmp_path):
    # Two particles in an open box: F = -dU/dr of the shifted LJ law.
    (tmp_path / "two.csv").write_text("x,y,z,vx,vy,vz,mass\n0,0,0,0,0,0,1\n1,0,0,0,0,0,1\n")
    sc = {"simulation": {"dimension": 3, "steps": 1, "output": str(tmp_path / "o")},
          "box": {"lo": [-5, -5, -5], "hi": [5, 5, 5], "boundary": "open"},
          "particles": [{"generator": "file", "path": str(tmp_path / "two.csv")}],
          "potential": [{"type": "lennard_jones", "rcut": 2.5}],
          "integrator": {"type": "velocity_verlet", "dt": 0.001}}
    sim = pardyn.Simulation(sc)
    x = sim.positions
    x[1, 0] = 1.3
    sim.positions = x
    f = sim.forces
    r = 1.3
    expected = 24 * (2 / r**13 - 1 / r**7)  # on particle 1 along +x (attractive at 1.3: < 0)
    assert f[1, 0] == pytest.approx(expected, rel=1e-12)
    assert f[0, 0] == pytest.approx(-expected, rel=1e-12)


def test_callbacks_run_at_their_interval_and_their_errors_end_the_run(lj2d):
    sim = pardyn.Simulation(lj2d)
    seen = []
    sim.add_callback(lambda s: seen.append((s.step, s.positions.shape)), 25)
    sim.run(100)
    assert [s for s, _ in seen] == [0, 25, 50, 75, 100]
    assert seen[0][1] == (256, 2)

    def boom(s):
        if s.step >= 150:
            raise ZeroDivisionError("from the callback")

    sim.add_callback(boom, 10)
    with pytest.raises(ZeroDivisionError, match="from the callback"):
        sim.run(100)
    assert sim.step == 150
    with pytest.raises(pardyn.Error, match="ended with an error"):
        sim.run(1)


def test_ctrl_c_stops_the_run_cleanly(tmp_path, lj2d):
    lj2d["simulation"]["steps"] = 10**9
    lj2d["output"].append({"type": "checkpoint", "interval": 10**8})
    sim = pardyn.Simulation(lj2d)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    timer.join()
    stopped = sim.step
    assert 0 < stopped < 10**9
    # The stopped state was observed and checkpointed ...
    _, rows = read_csv(tmp_path / "out/thermo.csv")
    assert rows[-1][0] == stopped
    assert (tmp_path / ("out/checkpoints/checkpoint-%012d.h5" % stopped)).exists()
    # ... and the run goes on.
    sim.run(5)
    assert sim.step == stopped + 5
    sim.close()


def test_scenario_errors_carry_file_line_and_column(tmp_path, lj2d):
    bad = tmp_path / "bad.toml"
    bad.write_text(pardyn.to_toml(lj2d).replace("dt = 0.005", "dtt = 0.005"))
    with pytest.raises(pardyn.ScenarioError) as e:
        pardyn.Simulation(bad)
    line = [n for n, l in enumerate(bad.read_text().splitlines(), 1) if l.startswith("dtt")][0]
    assert (e.value.file, e.value.line, e.value.column) == (str(bad), line, 1)
    assert "did you mean 'dt'" in str(e.value)
    # The same message as the command line.
    cli = subprocess.run([str(BUILD / "bin/pardyn"), "validate", str(bad)], capture_output=True,
                         text=True)
    assert str(e.value) in cli.stderr

    syntax = tmp_path / "syntax.toml"
    syntax.write_text("[simulation]\nsteps = = 3\n")
    with pytest.raises(pardyn.ScenarioError) as e:
        pardyn.Simulation(syntax)
    assert (e.value.line, e.value.column) > (1, 0) and "syntax" in str(e.value)

    with pytest.raises(pardyn.ScenarioError) as e:
        pardyn.Simulation(lj2d, set={"particles.0.density": -1})
    assert e.value.file.startswith("--set")

    lj2d["box"]["hi"] = [30.0, 30.0]  # not a whole number of lattice cells: the generator refuses
    with pytest.raises(pardyn.ScenarioError) as e:
        pardyn.Simulation(lj2d)
    assert e.value.file == "<dict>" and e.value.line > 0 and "lattice" in str(e.value)

    with pytest.raises(pardyn.Error, match="no such file"):
        pardyn.Simulation(tmp_path / "none.toml")


def test_closed_and_with(lj2d):
    with pardyn.Simulation(lj2d) as sim:
        sim.run(10)
    with pytest.raises(pardyn.Error, match="closed"):
        sim.run(1)
    assert sim.positions.shape == (256, 2)  # still readable


def test_help_is_useful():
    doc = pardyn.Simulation.__doc__
    for word in ("scenario", "set", "output", "positions", "GPU"):
        assert word in doc
    for name in ("run", "thermo", "thermo_history", "add_callback", "close"):
        assert len(getattr(pardyn.Simulation, name).__doc__) > 80


def test_cuda_backend_copies_from_the_gpu(tmp_path, lj2d):
    lj2d["simulation"]["backend"] = "cuda"
    try:
        sim = pardyn.Simulation(lj2d)
    except pardyn.Error as e:
        pytest.skip("no CUDA device here: %s" % str(e).splitlines()[0])
    cpu = dict(lj2d)
    cpu["simulation"] = dict(lj2d["simulation"], backend="cpu", output=str(tmp_path / "cpu"))
    ref = pardyn.Simulation(cpu)
    assert sim.backend == "cuda"
    assert np.array_equal(sim.positions, ref.positions)
    sim.run(20)
    ref.run(20)
    assert np.allclose(sim.positions, ref.positions, atol=1e-9)
    x = sim.positions
    x[0] += 0.01
    sim.positions = x
    assert np.array_equal(sim.positions, x)


def test_installed_module_finds_its_plugins(tmp_path):
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    site = [p for p in prefix.glob("lib/python3*/dist-packages")]
    assert len(site) == 1
    env = dict(os.environ, PYTHONPATH=str(site[0]))
    env.pop("PARDYN_PLUGIN_PATH", None)
    code = ("import pardyn; p = pardyn.plugins(); "
            "print(len(p), pardyn._pardyn.plugin_dir)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    count, folder = out.stdout.split()
    assert int(count) > 20
    assert pathlib.Path(folder) == prefix / "lib/pardyn/plugins"


def test_exit_without_close_keeps_the_last_observation(tmp_path):
    # A script that never closes its Simulation: Python's exit closes it, observing step 25.
    code = ("import pardyn\n"
            "s = pardyn.Simulation(%r, set={'simulation.steps': 50}, output=%r)\n"
            "s.add_callback(lambda sim: sim.positions, 10)\n"
            "s.run(25)\n" % (str(ROOT / "examples/lammps/lj2d.toml"), str(tmp_path / "o")))
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    _, rows = read_csv(tmp_path / "o/thermo.csv")
    assert [row[0] for row in rows] == [0, 25]
