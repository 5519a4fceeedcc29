# SPDX-License-Identifier: BSD-3-Clause
"""Driving a run from Python as a HOOMD-blue or OpenMM user does (docs/python.md): close() and
`with` free everything, parameters change during the run, snapshots and resumes continue exactly,
per-particle energies and virials, the GPU's choice, and clear errors for wrong arguments."""
import csv
import fcntl
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import pardyn
from conftest import BUILD, ROOT


def last_row(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return dict(zip(rows[0], (float(x) for x in rows[-1])))


def cli_problem(scenario_file, override):
    """What `pardyn validate` says about one --set value."""
    r = subprocess.run([str(BUILD / "bin/pardyn"), "validate", str(scenario_file), "--set",
                        override], capture_output=True, text=True)
    assert r.returncode != 0
    return r.stderr


def two_particles(tmp_path, r=1.3):
    """Two LJ particles r apart on x in an open box (the analytic cases)."""
    (tmp_path / "two.csv").write_text("x,y,z,vx,vy,vz,mass\n0,0,0,0,0,0,1\n%r,0,0,0,0,0,1\n" % r)
    return {"simulation": {"dimension": 3, "steps": 10, "output": str(tmp_path / "two")},
            "box": {"lo": [-5, -5, -5], "hi": [5, 5, 5], "boundary": "open"},
            "particles": [{"generator": "file", "path": str(tmp_path / "two.csv")}],
            "potential": [{"type": "lennard_jones", "rcut": 2.5}],
            "integrator": {"type": "velocity_verlet", "dt": 0.001}}


def lj_force(r, eps=1.0, sigma=1.0):
    return 24 * eps * (2 * (sigma / r) ** 12 - (sigma / r) ** 6) / r


def lj_energy(r, eps=1.0, sigma=1.0, rc=2.5):
    u = lambda x: 4 * eps * ((sigma / x) ** 12 - (sigma / x) ** 6)
    return u(r) - u(rc)


# --- close() and `with` free everything -----------------------------------------------------------

def test_close_frees_the_output_folder_for_a_new_run(tmp_path, lj2d):
    sim = pardyn.Simulation(lj2d)
    sim.run(20)
    # A second run in the folder while the first lives is refused, saying why.
    with pytest.raises(pardyn.Error, match="in use by another run of this process"):
        pardyn.Simulation(lj2d)
    sim.close()
    assert sim.closed
    lock = tmp_path / "out/.pardyn.lock"
    with open(lock) as f:  # nobody holds the folder's lock now
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(f, fcntl.LOCK_UN)
    # Re-running a notebook cell: the same folder again, and again with `with`.
    again = pardyn.Simulation(lj2d)
    again.run(10)
    again.close()
    for _ in range(2):
        with pardyn.Simulation(lj2d) as s:
            s.run(5)
        assert s.closed


def test_a_closed_simulation_shows_its_final_state(tmp_path, lj2d):
    sim = pardyn.Simulation(lj2d)
    seen = []
    sim.add_callback(lambda s: seen.append(s.step), 10)
    sim.run(30)
    x, f, e = sim.positions, sim.forces, sim.potential_energies
    sim.close()
    assert sim.step == 30 and sim.n == 256 and sim.dimension == 2
    assert np.array_equal(sim.positions, x)
    assert np.array_equal(sim.forces, f)
    assert np.array_equal(sim.potential_energies, e)
    row = last_row(tmp_path / "out/thermo.csv")
    t = sim.thermo()
    assert t["step"] == row["step"] == 30
    assert t["total"] == pytest.approx(row["total"], rel=1e-15)
    assert list(sim.thermo_history()["step"])[-1] == 30
    with pytest.raises(pardyn.Error, match="closed"):
        sim.run(1)
    with pytest.raises(pardyn.Error, match="closed"):
        sim.velocities = np.zeros((256, 2))
    with pytest.raises(pardyn.Error, match="closed"):
        sim.snapshot()
    sim.close()  # twice: nothing
    # A run closed before its first step computed nothing; its particles are still there.
    never = pardyn.Simulation(lj2d)
    never.close()
    assert never.positions.shape == (256, 2)
    with pytest.raises(pardyn.Error, match="never ran"):
        never.forces


def test_thermo_follows_a_change_at_an_observed_step(lj2d):
    sim = pardyn.Simulation(lj2d)
    sim.run(50)  # thermo observes step 50
    assert sim.thermo()["kinetic"] > 0
    sim.velocities = np.zeros((256, 2))
    assert sim.thermo()["kinetic"] == 0.0
    x = sim.positions
    x[0, 0] += 0.05
    sim.positions = x
    assert sim.thermo()["potential"] == pytest.approx(sim.potential_energies.sum(), rel=1e-12)


# --- parameters during the run ---------------------------------------------------------------------

def test_dt_changes_from_the_next_step(tmp_path, lj2d):
    # The cell stencil without a Verlet list: the forces then depend on the positions alone, not on
    # when a list was built, so the two runs below must agree bit for bit.
    lj2d["potential"][0]["scheme"] = {"type": "cell_list", "skin": 0.0}
    a = pardyn.Simulation(lj2d, output=str(tmp_path / "a"))
    a.run(100)
    a.dt = 0.0025
    assert a.integrator.dt == 0.0025 and a.dt == 0.0025
    assert "dt = 0.0025" in a.scenario_toml
    x100, v100 = a.positions, a.velocities
    a.run(40)
    assert a.time == pytest.approx(100 * 0.005 + 40 * 0.0025, rel=1e-14)
    assert a.thermo()["dt"] == 0.0025
    # The same as a run that starts from that state with that dt.
    b = pardyn.Simulation(lj2d, set={"integrator.dt": 0.0025}, output=str(tmp_path / "b"))
    b.positions, b.velocities = x100, v100
    b.run(40)
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.velocities, b.velocities)


def test_a_refused_value_is_refused_as_in_a_scenario_file(tmp_path, lj2d):
    f = tmp_path / "lj.toml"
    f.write_text(pardyn.to_toml(lj2d))
    sim = pardyn.Simulation(f)
    sim.run(5)
    with pytest.raises(pardyn.ScenarioError) as e:
        sim.dt = -0.001
    assert isinstance(e.value, ValueError)
    assert e.value.problems[0][3] in cli_problem(f, "integrator.dt=-0.001")
    with pytest.raises(ValueError) as e:
        sim.potentials[0].epsilon = -1
    assert e.value.problems[0][3] in cli_problem(f, "potential.0.epsilon=-1")
    with pytest.raises(ValueError, match="must be float, not a string"):
        sim.potentials[0].sigma = "big"
    with pytest.raises(ValueError, match="did you mean 'epsilon'"):
        sim.configure({"potential.0.epsilonn": 1.0})
    with pytest.raises(AttributeError, match="did you mean 'epsilon'"):
        sim.potentials[0].epsilonn = 1.0
    # What is not a parameter of a law, a modifier or dt cannot change, and says so.
    with pytest.raises(ValueError, match="simulation.seed cannot change during a run"):
        sim.configure({"simulation.seed": 3})
    with pytest.raises(ValueError, match=r"potential\[0\].scheme.skin cannot change"):
        sim.configure({"potential.0.scheme.skin": 0.5})
    with pytest.raises(ValueError, match=r"no \[\[potential\]\] number 3"):
        sim.configure({"potential.3.epsilon": 1.0})
    # Nothing changed, and the run goes on.
    assert sim.dt == 0.005 and sim.potentials[0].epsilon == 1.0
    sim.run(5)
    assert sim.step == 10


def test_a_law_takes_new_parameters(tmp_path):
    sim = pardyn.Simulation(two_particles(tmp_path))
    assert sim.forces[1, 0] == pytest.approx(lj_force(1.3), rel=1e-12)  # < 0: attractive
    lj = sim.potentials[0]
    assert (lj.type, lj.kind, lj.index) == ("lennard_jones", "potential", 0)
    lj.set(epsilon=2.0, sigma=1.1)
    assert lj.params["epsilon"] == 2.0 and lj.sigma == 1.1
    assert sim.forces[1, 0] == pytest.approx(lj_force(1.3, 2.0, 1.1), rel=1e-12)
    assert sim.thermo()["potential"] == pytest.approx(lj_energy(1.3, 2.0, 1.1), rel=1e-12)
    # Beyond a shorter cut-off the pair does not interact.
    lj.rcut = 1.2
    assert np.array_equal(sim.forces, np.zeros((2, 3)))
    # A new energy function: the drift reference starts again.
    sim.run(5)
    assert sim.thermo()["relative_drift"] == pytest.approx(0, abs=1e-12)


def test_a_cut_off_past_half_the_periodic_box_is_refused(lj2d):
    sim = pardyn.Simulation(lj2d)
    with pytest.raises(ValueError, match="more than half the periodic box"):
        sim.potentials[0].rcut = 9.0
    assert sim.potentials[0].rcut == 2.5


def test_a_thermostat_takes_a_new_target(tmp_path, lj2d):
    lj2d["modifier"] = [{"type": "berendsen", "temperature": 1.0, "tau": 0.05}]
    sim = pardyn.Simulation(lj2d)
    sim.run(400)
    thermostat = sim.modifiers[0]
    assert thermostat.type == "berendsen" and thermostat.temperature == 1.0
    thermostat.temperature = 0.4
    temps = []
    sim.add_callback(lambda s: temps.append(s.thermo()["temperature"]), 10)
    sim.run(1000)
    assert np.mean(temps[-50:]) == pytest.approx(0.4, rel=0.03)
    # A ramp needs its end time: the plugin's own check, and nothing changes.
    with pytest.raises(ValueError, match="ramp_end"):
        thermostat.set(temperature_end=0.2)
    assert thermostat.params["temperature_end"] == -1.0
    with pytest.raises(ValueError, match=r"modifier\[0\].type cannot change"):
        sim.configure({"modifier.0.type": "langevin"})


def test_an_adaptive_integrator_keeps_choosing_its_steps(lj2d):
    lj2d["integrator"] = {"type": "dopri5", "dt": 0.005}
    sim = pardyn.Simulation(lj2d)
    with pytest.raises(ValueError, match="chooses the size of its steps itself"):
        sim.dt = 0.001


# --- snapshot / restore / resume ------------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["velocity_verlet", "ab5"])
def test_restore_continues_exactly(tmp_path, lj2d, integrator):
    # A Verlet list (built_at), a thermostat with noise and state, a multistep history (ab5).
    lj2d["potential"][0]["scheme"] = {"type": "cell_list", "skin": 0.3}
    lj2d["integrator"]["type"] = integrator
    lj2d["modifier"] = [{"type": "langevin", "temperature": 1.0, "tau": 0.5, "interval": 3}]
    sim = pardyn.Simulation(lj2d)
    sim.run(52)
    snap = sim.snapshot()
    assert (snap.step, snap.n) == (52, 256) and snap.time == sim.time
    assert np.array_equal(snap.positions, sim.positions)
    assert np.array_equal(snap.forces, sim.forces)
    sim.run(70)
    x, v, t = sim.positions, sim.velocities, sim.thermo()
    sim.restore(snap)
    assert sim.step == 52 and sim.time == snap.time
    assert np.array_equal(sim.positions, snap.positions)
    sim.run(70)
    assert np.array_equal(sim.positions, x)
    assert np.array_equal(sim.velocities, v)
    assert sim.thermo()["total"] == t["total"]


def test_restore_brings_back_the_parameters_of_its_state(tmp_path, lj2d):
    lj2d["modifier"] = [{"type": "berendsen", "temperature": 1.0, "tau": 0.1}]
    sim = pardyn.Simulation(lj2d)
    sim.run(30)
    snap = sim.snapshot()
    sim.run(20)
    x = sim.positions
    sim.modifiers[0].temperature = 2.0
    sim.dt = 0.002
    sim.run(10)
    sim.restore(snap)
    assert sim.modifiers[0].temperature == 1.0 and sim.dt == 0.005
    sim.run(20)
    assert np.array_equal(sim.positions, x)
    assert sim.time == 50 * 0.005


def test_a_snapshot_goes_to_a_run_of_its_kind_only(tmp_path, lj2d):
    a = pardyn.Simulation(lj2d, output=str(tmp_path / "a"))
    a.run(10)
    snap = a.snapshot()
    b = pardyn.Simulation(lj2d, output=str(tmp_path / "b"))
    b.restore(snap)
    assert b.step == 10 and np.array_equal(b.positions, a.positions)
    a.run(15)
    b.run(15)
    assert np.array_equal(a.positions, b.positions)
    other = dict(lj2d, particles=[dict(lj2d["particles"][0], density=0.5, fit="stretch")])
    other["box"] = {"lo": [0, 0], "hi": [24.0, 20.0], "boundary": "periodic"}
    c = pardyn.Simulation(other, output=str(tmp_path / "c"))
    with pytest.raises(pardyn.Error, match="cannot restore the state of step 10"):
        c.restore(snap)
    with pytest.raises(TypeError, match="pardyn.Snapshot"):
        b.restore({"positions": a.positions})


def test_resume_continues_a_run_from_its_checkpoint(tmp_path, lj2d):
    lj2d["output"].append({"type": "checkpoint", "interval": 50})
    whole = pardyn.Simulation(lj2d, output=str(tmp_path / "whole"))
    whole.run()
    whole.close()
    first = pardyn.Simulation(lj2d, output=str(tmp_path / "cut"))
    first.run(100)  # checkpoints at 50 and 100, where thermo observes too
    first.close()
    sim = pardyn.Simulation.resume(tmp_path / "cut")
    assert sim.step == 100 and sim.output_dir == str(tmp_path / "cut")
    sim.run()
    assert sim.step == 200
    assert np.array_equal(sim.positions, whole.positions)
    sim.close()
    with open(tmp_path / "whole/thermo.csv") as f1, open(tmp_path / "cut/thermo.csv") as f2:
        assert f1.read() == f2.read()
    # A longer run from the same checkpoint, in another folder.
    more = pardyn.Simulation.resume(tmp_path / "cut/checkpoints", set={"simulation.steps": 260},
                                    output=str(tmp_path / "more"))
    assert more.step == 200 and more.run() == 60
    # What would break the exact continuation is refused unless asked for.
    with pytest.raises(pardyn.Error, match="integrator.dt"):
        pardyn.Simulation.resume(tmp_path / "cut", set={"integrator.dt": 0.001},
                                 output=str(tmp_path / "changed"))
    changed = pardyn.Simulation.resume(tmp_path / "cut", set={"integrator.dt": 0.001},
                                       output=str(tmp_path / "changed"), changed=True)
    changed.run(10)
    assert changed.time == pytest.approx(200 * 0.005 + 10 * 0.001, rel=1e-13)
    with pytest.raises(pardyn.Error, match="no such file or folder"):
        pardyn.Simulation.resume(tmp_path / "nothing-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(pardyn.Error, match="checkpoint"):
        pardyn.Simulation.resume(tmp_path / "empty")


def test_a_checkpoint_keeps_the_values_changed_during_the_run(tmp_path, lj2d):
    lj2d["modifier"] = [{"type": "berendsen", "temperature": 1.0, "tau": 0.1}]
    lj2d["output"].append({"type": "checkpoint", "interval": 50, "keep": 5})
    sim = pardyn.Simulation(lj2d)
    sim.run(40)
    sim.dt = 0.0025
    sim.modifiers[0].temperature = 0.5
    sim.run(90)  # checkpoints at 50 and 100
    x, t = sim.positions, sim.time
    sim.close()
    ck = tmp_path / "out/checkpoints/checkpoint-000000000100.h5"
    again = pardyn.Simulation.resume(ck, output=str(tmp_path / "again"))
    assert again.step == 100 and again.dt == 0.0025
    assert again.modifiers[0].temperature == 0.5
    again.run(30)
    assert again.time == t  # the clock went with the checkpoint
    assert t == pytest.approx(40 * 0.005 + 90 * 0.0025, rel=1e-15)
    assert np.array_equal(again.positions, x)


# --- per-particle energies and virials ------------------------------------------------------------

def test_per_particle_energy_and_virial_of_a_pair(tmp_path):
    r = 1.3
    sim = pardyn.Simulation(two_particles(tmp_path, r))
    e, w = sim.potential_energies, sim.virials
    assert e.shape == (2,) and w.shape == (2,)
    assert e == pytest.approx([lj_energy(r) / 2] * 2, rel=1e-12)
    assert w == pytest.approx([r * lj_force(r) / 2] * 2, rel=1e-12)


def test_per_particle_energies_and_virials_sum_to_thermo(lj2d):
    sim = pardyn.Simulation(lj2d)
    sim.run(25)
    t = sim.thermo()
    assert sim.potential_energies.sum() == pytest.approx(t["potential"], rel=1e-12)
    area = 20.549707 * 17.796569
    pressure = (2 * t["kinetic"] + sim.virials.sum()) / (2 * area)
    assert pressure == pytest.approx(t["pressure"], rel=1e-12)
    # After new positions they are those of the new positions.
    x = sim.positions
    x[0, 0] += 0.05
    sim.positions = x
    assert sim.potential_energies.sum() == pytest.approx(sim.thermo()["potential"], rel=1e-12)


# --- the GPU -------------------------------------------------------------------------------------

def test_device_is_checked(lj2d):
    with pytest.raises(ValueError, match="device must be a GPU number >= 0"):
        pardyn.Simulation(lj2d, device=-1)
    with pytest.raises(TypeError, match="whole number"):
        pardyn.Simulation(lj2d, device="0")
    cpu = dict(lj2d, simulation=dict(lj2d["simulation"], backend="cpu"))
    with pytest.raises(ValueError, match="runs on the CPU"):
        pardyn.Simulation(cpu, device=0)
    gpu = dict(lj2d, simulation=dict(lj2d["simulation"], backend="cuda"))
    try:
        sim = pardyn.Simulation(gpu, device=0)
    except pardyn.Error as e:
        assert "no CUDA device is visible" in str(e) or "built without CUDA" in str(e)
        pytest.skip("no CUDA device here: %s" % str(e).splitlines()[0])
    assert sim.backend == "cuda" and sim.device == 0
    count = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                               text=True).stdout.count("GPU "))
    with pytest.raises(ValueError, match="numbered 0"):
        pardyn.Simulation(gpu, device=max(count, 1) + 8)
    sim.run(10)
    assert np.isfinite(sim.thermo()["total"])


# --- clear errors for wrong arguments ------------------------------------------------------------

def test_lists_are_accepted_where_arrays_are(lj2d):
    sim = pardyn.Simulation(lj2d)
    v = sim.velocities
    sim.velocities = v.tolist()
    assert np.array_equal(sim.velocities, v)
    sim.masses = [2.0] * sim.n
    assert np.all(sim.masses == 2.0)
    sim.types = [0] * sim.n
    sim.positions = sim.positions.tolist()
    sim.velocities = np.zeros((sim.n, 2), dtype=np.float32)  # any real dtype
    assert sim.thermo()["kinetic"] == 0.0


def test_wrong_types_and_shapes_say_what_to_pass(lj2d):
    sim = pardyn.Simulation(lj2d)
    with pytest.raises(TypeError, match=r"velocities must be numbers.*\(256, 2\).*not strings"):
        sim.velocities = [["a", "b"]] * 256
    with pytest.raises(ValueError, match=r"must have shape \(256, 2\).*not \(256, 3\)"):
        sim.positions = np.zeros((256, 3))
    with pytest.raises(ValueError, match="velocities must be numbers"):
        sim.velocities = [[0.0, 1.0], [2.0]]  # ragged
    with pytest.raises(TypeError, match="not complex"):
        sim.masses = np.ones(256, dtype=complex)
    with pytest.raises(TypeError, match=r"types must be integers, not float64.*astype\(int\)"):
        sim.types = np.zeros(256)
    with pytest.raises(TypeError, match="types must be integers"):
        sim.types = [0.0] * 256
    with pytest.raises(TypeError, match="not bools"):
        sim.types = np.zeros(256, dtype=bool)
    with pytest.raises(ValueError, match=r"types\[3\] = -1"):
        sim.types = [0, 0, 0, -1] + [0] * 252
    with pytest.raises(ValueError, match=r"must have shape \(256,\)"):
        sim.masses = 1.0
    # run(): whole numbers only; a float without a fraction is one.
    with pytest.raises(ValueError, match="whole number, not 2.5"):
        sim.run(2.5)
    assert sim.step == 0
    with pytest.raises(TypeError, match="whole number"):
        sim.run("10")
    with pytest.raises(TypeError, match="not a bool"):
        sim.run(True)
    with pytest.raises(ValueError, match=">= 0"):
        sim.run(-3)
    assert sim.run(1e1) == 10 and sim.run(np.int64(2)) == 2 and sim.step == 12
    with pytest.raises(TypeError, match="callable"):
        sim.add_callback(3, 10)
    with pytest.raises(ValueError, match="whole number"):
        sim.add_callback(print, 0.5)
    with pytest.raises(TypeError, match="a scenario is the path"):
        pardyn.Simulation(42)
    with pytest.raises(TypeError, match="set= takes a dict"):
        pardyn.Simulation(lj2d, set=5)
    with pytest.raises(TypeError, match="output must be a path"):
        pardyn.Simulation(lj2d, output=3)
    with pytest.raises(TypeError, match="configure"):
        sim.configure(0.5)


def test_import_fails_at_once_without_numpy(tmp_path):
    code = "import sys; sys.modules['numpy'] = None; import pardyn"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "ImportError: pardyn needs NumPy" in r.stderr
    assert "python3-numpy" in r.stderr
