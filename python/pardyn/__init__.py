# SPDX-License-Identifier: BSD-3-Clause
"""pardyn from Python: run a scenario, step it, look at its particles as NumPy arrays.

    import pardyn
    sim = pardyn.Simulation("examples/real_gas_2d/scenario.toml", set={"simulation.steps": 2000})
    sim.run(1000)                      # 1000 steps; the scenario's outputs are written as usual
    print(sim.thermo()["temperature"], sim.positions.shape)

A Simulation is the same run as `pardyn run`: the scenario is read and validated by the same code
(errors are raised as pardyn.ScenarioError with file, line and column), the plugins are the same,
the outputs ([[output]]: VTK frames, thermo.csv, checkpoints ...) are written as from the command
line. See docs/python.md.
"""

import atexit as _atexit
import json as _json
import math as _math
import os as _os
import weakref as _weakref

from . import _pardyn

__version__ = _pardyn.__version__
__all__ = ["Simulation", "Error", "ScenarioError", "plugins", "to_toml", "__version__"]


class Error(RuntimeError):
    """An error pardyn reports (a run that cannot go on, a bad argument): the message says what
    is wrong and what to do, as on the command line."""


class ScenarioError(Error, ValueError):
    """A scenario that does not validate.

    str(e) is the full message the command line prints. Attributes:
      file, line, column   where the first problem is (line and column are 0 for a value that
                           came from `set=`; file is then the override, "--set key=value")
      problems             every problem, as (file, line, column, message) tuples
    A scenario given as a dict is read as the TOML text that pardyn.to_toml(dict) returns, whose
    lines the line numbers refer to; its file is "<dict>".
    """

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = [tuple(p) for p in problems]
        first = self.problems[0] if self.problems else ("", 0, 0, message)
        self.file, self.line, self.column = first[0], first[1], first[2]


def plugins():
    """Every plugin pardyn can load, as a list of dicts: name, kind (potential, scheme,
    integrator, modifier, generator, observer), summary, doc (what `pardyn plugins show NAME`
    prints), dimensions, backends, precisions, library, and parameters (each a dict with name,
    type, unit, doc, required, default, min, max, choices)."""
    return _pardyn.plugins()


# --- scenarios as dicts -------------------------------------------------------------------------

def _toml_value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if _math.isnan(v):
            return "nan"
        if _math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x, where) for x in v) + "]"
    try:  # NumPy scalars and arrays
        import numpy as _np
        if isinstance(v, _np.ndarray):
            return _toml_value(v.tolist(), where)
        if isinstance(v, _np.generic):
            return _toml_value(v.item(), where)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError("%s: a scenario value must be a number, a string, a bool or a list of them, "
                    "not %s" % (where, type(v).__name__))


def _is_table_list(v):
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, dict) for x in v)


def _emit_table(lines, name, table, array):
    if name:
        lines.append("")
        lines.append(("[[%s]]" if array else "[%s]") % name)
    subs = []
    for key, value in table.items():
        if not isinstance(key, str):
            raise TypeError("%s: keys must be strings, not %r" % (name or "scenario", key))
        full = name + "." + key if name else key
        if isinstance(value, dict) or _is_table_list(value):
            subs.append((full, value))
        else:
            lines.append("%s = %s" % (key, _toml_value(value, full)))
    for full, value in subs:
        if isinstance(value, dict):
            _emit_table(lines, full, value, False)
        else:
            for item in value:
                _emit_table(lines, full, item, True)


def to_toml(scenario):
    """The TOML text of a scenario given as a dict in the layout of a scenario file:
    {"simulation": {...}, "box": {...}, "particles": [{...}, ...], "potential": [{...}],
    "integrator": {...}, "output": [{...}]}. A list of dicts becomes an array of tables
    ([[particles]]), a dict inside a section a sub-table ([potential.scheme])."""
    if not isinstance(scenario, dict):
        raise TypeError("a scenario is a file name or a dict, not %s" % type(scenario).__name__)
    lines = []
    _emit_table(lines, "", scenario, False)
    return "\n".join(lines).lstrip("\n") + "\n"


def _overrides(set):
    if set is None:
        return []
    if isinstance(set, dict):
        return ["%s=%s" % (k, _toml_value(v, k)) for k, v in set.items()]
    return [str(s) for s in set]


# The Simulations alive: closed when the interpreter exits (a module-level `sim` is otherwise torn
# down after the modules it needs, and its last observation would be lost).
_live = _weakref.WeakSet()


@_atexit.register
def _close_all():
    for sim in list(_live):
        try:
            sim.close()
        except Exception:  # pragma: no cover - the interpreter is going; nothing to report to
            pass


class Simulation:
    """A pardyn run, stepped from Python.

    Simulation(scenario, set=None, output=None, quiet=True)

    scenario  the path of a scenario file (.toml), or a dict in the same layout (see to_toml);
              relative paths inside a dict (input files, output) are relative to the current
              folder.
    set       overrides, as `pardyn run --set`: {"integrator.dt": 0.002, "particles.0.count":
              1000} or a list of "key=value" strings.
    output    the output folder (default: the scenario's simulation.output, else out/NAME).
    quiet     True (default): no progress lines on the terminal; log.txt in the output folder has
              them all the same.

    The particles are generated when the Simulation is made; the initial forces and the step-0
    observation (the first row of thermo.csv, the first VTK frame) happen at the first run(),
    thermo() or forces. Set positions, velocities, masses or types before that to start from
    your own state.

    Particle arrays (positions, velocities, forces, masses, types, images, ids) are NumPy copies
    in the order of particle ids, made from the backend's memory (from the GPU for CUDA runs) at
    each access: keep the array rather than reading the property in a loop. Assigning to
    positions, velocities, masses or types copies the array back (the forces are recomputed
    before the next step). Changing the returned array alone changes nothing in the run.

    The run's outputs are closed by close(), at the end of a `with` block, when the object is
    deleted, or when Python exits; until then thermo.csv and the frames hold every observation so
    far.
    """

    def __init__(self, scenario, set=None, output=None, quiet=True):
        overrides = _overrides(set)
        if isinstance(scenario, dict):
            sc = dict(scenario)
            simsec = dict(sc.get("simulation", {}))
            simsec.setdefault("name", "python")
            sc["simulation"] = simsec
            self._sim = _pardyn._Simulation("<dict>", to_toml(sc), _os.getcwd(), overrides,
                                            output or "", bool(quiet))
        else:
            path = _os.fspath(scenario)
            self._sim = _pardyn._Simulation(path, "", "", overrides, output or "", bool(quiet))
        self._callbacks = []
        self._sim._bind(_weakref.ref(self))
        _live.add(self)

    # -- running --
    def run(self, steps=None):
        """Runs `steps` more steps (an int >= 0) and returns how many were done. Without
        `steps`, runs to the scenario's end (simulation.steps or end_time) as `pardyn run`
        does, observing the final state.

        Observers ([[output]] and callbacks) run at their intervals counted in steps from 0,
        whatever the pieces the run is made of. Ctrl-C stops the run after the current step: that
        state is observed (and checkpointed if the scenario has a checkpoint output), then
        KeyboardInterrupt is raised; run() may be called again afterwards."""
        if steps is not None:
            steps = int(steps)
            if steps < 0:
                raise ValueError("run(steps): steps must be >= 0, not %d" % steps)
        return self._sim.run(steps)

    def add_callback(self, fn, interval):
        """Calls fn(simulation) every `interval` steps while run() steps (a Python observer).
        fn may read the particles and thermo(); an exception it raises ends the run (the
        outputs are closed) and is raised by run()."""
        interval = int(interval)
        self._sim.add_callback(fn, interval)
        self._callbacks.append(fn)

    def close(self):
        """Ends the run: observes the final state if it was not, writes the end checkpoint (if
        the scenario has a checkpoint output) and closes the outputs. The Simulation can be read
        but not run afterwards."""
        self._sim.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- global quantities --
    def thermo(self):
        """The current global quantities as a dict with the columns of thermo.csv: step, time,
        kinetic, potential, total, relative_drift, momentum (px, py[, pz]), angular momentum,
        temperature, force_evaluations, dt, rejected_steps, com_drift, pressure, per-potential
        energies and the analyses' columns (NaN between observations)."""
        return self._sim.thermo()

    def thermo_history(self):
        """Every observation so far, one per step: the steps of the outputs' and callbacks'
        observations and of the progress lines (every simulation.progress_interval steps, by
        default a tenth of simulation.steps), also when the scenario has no thermo output. A
        dict of column name (those of thermo()) -> NumPy array, one element per observation."""
        return self._sim.thermo_history()

    # -- particles --
    @property
    def positions(self):
        """Positions, shape (n, dimension), in the order of particle ids (a copy)."""
        return self._sim.get("positions")

    @positions.setter
    def positions(self, value):
        self._sim.set("positions", value)

    @property
    def velocities(self):
        """Velocities, shape (n, dimension) (a copy; assign to change them)."""
        return self._sim.get("velocities")

    @velocities.setter
    def velocities(self, value):
        self._sim.set("velocities", value)

    @property
    def forces(self):
        """Forces m a on each particle, shape (n, dimension), of the current positions."""
        return self._sim.get("forces")

    @property
    def masses(self):
        """Masses, shape (n,) (a copy; assign to change them)."""
        return self._sim.get("masses")

    @masses.setter
    def masses(self, value):
        self._sim.set("masses", value)

    @property
    def types(self):
        """Particle types (int32), shape (n,) (a copy; assign to change them)."""
        return self._sim.get("types")

    @types.setter
    def types(self, value):
        self._sim.set("types", value)

    @property
    def images(self):
        """Periodic image counts (int32), shape (n, dimension): the unwrapped position is
        positions + images * box length on periodic axes."""
        return self._sim.get("images")

    @property
    def ids(self):
        """Particle ids (0 .. n-1), the order of every array here."""
        return self._sim.get("ids")

    # -- the run's description --
    step = property(lambda self: self._sim.step, doc="The current step.")
    time = property(lambda self: self._sim.time, doc="The simulation time of the current step.")
    n = property(lambda self: self._sim.n, doc="The number of particles.")
    dimension = property(lambda self: self._sim.dimension, doc="2 or 3.")
    backend = property(lambda self: self._sim.backend, doc='"cpu" or "cuda".')
    precision = property(lambda self: self._sim.precision, doc='"float" or "double".')
    dt = property(lambda self: self._sim.dt, doc="The integrator's last time step.")
    steps = property(lambda self: self._sim.steps, doc="The scenario's simulation.steps.")
    output_dir = property(lambda self: self._sim.output_dir, doc="The output folder.")
    box = property(lambda self: self._sim.box,
                   doc="The box: a dict with lo, hi (lists) and boundary (periodic, wall, open).")
    scenario_toml = property(lambda self: self._sim.scenario_toml,
                             doc="The resolved scenario (every key with its value) as TOML.")

    def __repr__(self):
        return "<pardyn.Simulation %dD, %d particles, %s, step %d, time %g>" % (
            self.dimension, self.n, self.backend, self.step, self.time)
