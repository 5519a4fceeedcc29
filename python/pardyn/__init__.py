# SPDX-License-Identifier: BSD-3-Clause
"""pardyn from Python: run a scenario, step it, look at its particles as NumPy arrays.

    import pardyn
    sim = pardyn.Simulation("examples/real_gas_2d/real_gas_2d.toml", set={"simulation.steps": 2000})
    sim.run(1000)                      # 1000 steps; the scenario's outputs are written as usual
    print(sim.thermo()["temperature"], sim.positions.shape)

A Simulation is the same run as `pardyn run`: the scenario is read and validated by the same code
(errors are raised as pardyn.ScenarioError with file, line and column), the plugins are the same,
the outputs ([[output]]: VTK frames, thermo.csv, checkpoints ...) are written as from the command
line. During a run its parameters can change (sim.dt, sim.potentials[k], sim.modifiers[k],
configure), its state can be kept and put back (snapshot, restore), and a run can be continued
from its checkpoint (Simulation.resume). See docs/python.md.
"""

import atexit as _atexit
import difflib as _difflib
import json as _json
import math as _math
import numbers as _numbers
import operator as _operator
import os as _os
import weakref as _weakref

try:
    import numpy as _np
except ImportError as _e:  # before anything runs, not at the first array after a long run
    raise ImportError(
        "pardyn needs NumPy, which this Python (%s) cannot import (%s): install it "
        "(Debian: apt install python3-numpy; or pip install numpy) and run the same Python"
        % (__import__("sys").executable, _e)) from _e

# Idle OpenMP threads sleep instead of spinning (what `pardyn run` sets for itself: on a node shared
# with other jobs, spinning threads collapse the speed; docs/performance.md). libgomp reads this
# when the extension loads it, so it is set before; a value the user gave is kept.
_os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from . import _pardyn

__version__ = _pardyn.__version__
__all__ = ["Simulation", "Snapshot", "Plugin", "Error", "ScenarioError", "plugins", "to_toml",
           "__version__"]


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
    if isinstance(v, _np.ndarray):  # NumPy scalars and arrays
        return _toml_value(v.tolist(), where)
    if isinstance(v, _np.generic):
        return _toml_value(v.item(), where)
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
    """`set=` as --set arguments: a dict {"integrator.dt": 0.002}, a list of "key=value" strings
    or one such string."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, dict):
        for k in set:
            if not isinstance(k, str):
                raise TypeError("set=: keys are strings such as \"integrator.dt\", not %r" % (k,))
        return ["%s=%s" % (k, _toml_value(v, k)) for k, v in set.items()]
    if isinstance(set, (list, tuple)) and all(isinstance(x, str) for x in set):
        return list(set)
    raise TypeError('set= takes a dict such as {"integrator.dt": 0.002} or a list of '
                    '"key=value" strings, not %s' % type(set).__name__)


def _whole(value, what):
    """An int from an int, a NumPy integer or a float without a fractional part (1e6); anything
    else is refused rather than rounded."""
    if isinstance(value, bool):
        raise TypeError("%s must be a whole number, not a bool" % what)
    try:
        return _operator.index(value)
    except TypeError:
        pass
    if isinstance(value, _numbers.Real):
        f = float(value)
        if _math.isfinite(f) and f.is_integer():
            return int(f)
        raise ValueError("%s must be a whole number, not %r (pardyn does not round it)"
                         % (what, value))
    raise TypeError("%s must be a whole number (an int), not %s" % (what, type(value).__name__))


def _path(value, what):
    try:
        return _os.fspath(value)
    except TypeError:
        raise TypeError("%s must be a path (a str or a pathlib.Path), not %s"
                        % (what, type(value).__name__)) from None


def _device(device):
    if device is None:
        return -1
    d = _whole(device, "device")
    if d < 0:
        raise ValueError("device must be a GPU number >= 0 (or None for the backend's choice), "
                         "not %d" % d)
    return d


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



# The particle arrays a Simulation copies back when assigned: (dtype kinds accepted, NumPy dtype,
# whether an element is a vector).
_SETTABLE = {
    "positions": ("iuf", _np.float64, True),
    "velocities": ("iuf", _np.float64, True),
    "masses": ("iuf", _np.float64, False),
    "types": ("iu", _np.int64, False),
}


class Simulation:
    """A pardyn run, stepped from Python.

    Simulation(scenario, set=None, output=None, quiet=True, device=None)
    Simulation.resume(where, scenario=None, set=None, output=None, quiet=True, changed=False,
                      device=None)

    scenario  the path of a scenario file (.toml), or a dict in the same layout (see to_toml);
              relative paths inside a dict (input files, output) are relative to the current
              folder.
    set       overrides, as `pardyn run --set`: {"integrator.dt": 0.002, "particles.0.count":
              1000} or a list of "key=value" strings.
    output    the output folder (default: the scenario's simulation.output, else out/NAME).
    quiet     True (default): no progress lines on the terminal; log.txt in the output folder has
              them all the same.
    device    the GPU (0, 1, ...) of a CUDA run; None: the backend's choice (GPU 0). One GPU per
              Python process.

    The particles are generated when the Simulation is made; the initial forces and the step-0
    observation (the first row of thermo.csv, the first VTK frame) happen at the first run(),
    thermo() or forces. Set positions, velocities, masses or types before that to start from
    your own state.

    Particle arrays (positions, velocities, forces, potential_energies, virials, masses, types,
    images, ids) are NumPy copies in the order of particle ids, made from the backend's memory
    (from the GPU for CUDA runs) at each access: keep the array rather than reading the property
    in a loop. Assigning an array (or a list) to positions, velocities, masses or types copies it
    back (the forces are recomputed before the next step). Changing the returned array alone
    changes nothing in the run.

    Parameters change during the run with configure({"potential.0.epsilon": 1.2}), through
    sim.potentials[k], sim.modifiers[k] and sim.integrator (Plugin objects), or sim.dt = ...;
    they are checked as the scenario file is. snapshot() and restore() keep and put back the
    whole state.

    close() (or the end of a `with` block) ends the run and frees it: the particles (also on the
    GPU), the plugins and the output folder, which a new Simulation may then use. A closed
    Simulation still shows its final particles and thermo(). Deleting the object or leaving
    Python closes it too.
    """

    def __init__(self, scenario, set=None, output=None, quiet=True, device=None):
        overrides = _overrides(set)
        output = "" if output is None else _path(output, "output")
        device = _device(device)
        if isinstance(scenario, dict):
            sc = dict(scenario)
            simsec = dict(sc.get("simulation", {}))
            simsec.setdefault("name", "python")
            sc["simulation"] = simsec
            sim = _pardyn._Simulation("<dict>", to_toml(sc), _os.getcwd(), overrides, output,
                                      bool(quiet), device, "", False)
        else:
            if not isinstance(scenario, (str, bytes, _os.PathLike)):
                raise TypeError("a scenario is the path of a scenario file (a str or a "
                                "pathlib.Path) or a dict, not %s" % type(scenario).__name__)
            sim = _pardyn._Simulation(_path(scenario, "scenario"), "", "", overrides, output,
                                      bool(quiet), device, "", False)
        self._adopt(sim)

    @classmethod
    def resume(cls, where, scenario=None, set=None, output=None, quiet=True, changed=False,
               device=None):
        """Continues a run from its newest intact checkpoint, as `pardyn run --resume WHERE`:
        `where` is a run's output folder, its checkpoints folder or a checkpoint file. The run
        goes on in that folder (or in `output`) with the checkpoint's scenario, or with the
        scenario file `scenario`, and the `set` overrides. Anything that would break the exact
        continuation (another law, another N, another build ...) is refused, naming the keys,
        unless changed=True (as --resume-changed). The outputs keep what they hold up to the
        checkpoint's step and go on from there."""
        overrides = _overrides(set)
        where = _path(where, "where")
        scenario = "" if scenario is None else _path(scenario, "scenario")
        output = "" if output is None else _path(output, "output")
        self = cls.__new__(cls)
        self._adopt(_pardyn._Simulation(scenario, "", "", overrides, output, bool(quiet),
                                        _device(device), where, bool(changed)))
        return self

    def _adopt(self, sim):
        self._sim = sim
        self._callbacks = []
        self._sim._bind(_weakref.ref(self))
        _live.add(self)

    # -- running --
    def run(self, steps=None):
        """Runs `steps` more steps and returns how many were done. `steps` is a whole number
        >= 0: an int, or a float without a fractional part (1e6); run(2.5) is refused. Without
        `steps`, runs to the scenario's end (simulation.steps or end_time) as `pardyn run`
        does, observing the final state.

        Observers ([[output]] and callbacks) run at their intervals counted in steps from 0,
        whatever the pieces the run is made of. Ctrl-C stops the run after the current step: that
        state is observed (and checkpointed if the scenario has a checkpoint output), then
        KeyboardInterrupt is raised; run() may be called again afterwards."""
        if steps is not None:
            steps = _whole(steps, "run(steps): steps")
            if steps < 0:
                raise ValueError("run(steps): steps must be >= 0, not %d" % steps)
            if steps > _pardyn.max_steps:
                raise ValueError("run(steps): steps must be at most %d, not %d"
                                 % (_pardyn.max_steps, steps))
        return self._sim.run(steps)

    def add_callback(self, fn, interval):
        """Calls fn(simulation) every `interval` steps (a whole number >= 1) while run() steps
        (a Python observer). fn may read the particles and thermo(); an exception it raises
        ends the run (the outputs are closed) and is raised by run()."""
        if not callable(fn):
            raise TypeError("add_callback(fn, interval): fn must be callable (a function of the "
                            "simulation), not %s" % type(fn).__name__)
        interval = _whole(interval, "add_callback(fn, interval): interval")
        if interval < 1:
            raise ValueError("add_callback(fn, interval): interval must be at least 1 step, "
                             "not %d" % interval)
        self._sim.add_callback(fn, interval)
        self._callbacks.append(fn)

    def close(self):
        """Ends the run and frees it: observes the final state if it was not, writes the end
        checkpoint (if the scenario has a checkpoint output), closes the outputs, and releases
        the particles (also on the GPU), the plugins, the callbacks and the output folder, which
        a new Simulation may then use. The final particles and thermo() can still be read;
        run(), the setters and snapshot() raise pardyn.Error. Closing twice does nothing."""
        try:
            self._sim.close()
        finally:
            self._callbacks = []

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

    # -- parameters during the run --
    def configure(self, changes):
        """Gives the run other parameter values from now on. `changes` is a dict in the form of
        `set=` ({"potential.0.epsilon": 1.2, "modifier.0.temperature": 0.5, "integrator.dt":
        0.002}) or a list of "key=value" strings; all are applied together. What may change:
        the parameters of every [[potential]] and [[modifier]], and integrator.dt (not types,
        schemes, particles, the box or the outputs). The values are checked as in a scenario
        file, then by the plugins' own checks: a refused value raises pardyn.ScenarioError (a
        ValueError) and changes nothing. A new law's energies start a new drift reference."""
        if not isinstance(changes, (dict, list, tuple, str)):
            raise TypeError('configure() takes a dict such as {"modifier.0.temperature": 0.5}, '
                            'not %s' % type(changes).__name__)
        overrides = _overrides(changes)
        if overrides:
            self._sim.configure(overrides)

    @property
    def potentials(self):
        """The run's [[potential]] sections, as Plugin objects (read and change parameters)."""
        return [Plugin(self, "potential", k) for k in range(len(self._sim.sections()["potential"]))]

    @property
    def modifiers(self):
        """The run's [[modifier]] sections (thermostats ...), as Plugin objects."""
        return [Plugin(self, "modifier", k) for k in range(len(self._sim.sections()["modifier"]))]

    @property
    def integrator(self):
        """The run's [integrator], as a Plugin object (its dt may change)."""
        return Plugin(self, "integrator", 0)

    @property
    def dt(self):
        """The integrator's last time step; assign to change integrator.dt from the next step
        on (fixed-step integrators; time then goes on from the current time by the new dt)."""
        return self._sim.dt

    @dt.setter
    def dt(self, value):
        self.configure({"integrator.dt": value})

    # -- the whole state --
    def snapshot(self):
        """The whole state now, in memory: particles with their forces, step, time, the
        integrator's and thermostats' states, and the parameters in effect (what a checkpoint
        file holds). Restore it with restore()."""
        return Snapshot(self._sim.snapshot())

    def restore(self, snapshot):
        """Puts a snapshot's state back, with the parameters it was taken with: the run then
        goes on exactly as it did from that state (the same positions bit for bit). The
        snapshot may come from another Simulation with the same particles, box and plugins. The
        outputs and callbacks are not rewound: they observe what follows, as it comes."""
        if not isinstance(snapshot, Snapshot):
            raise TypeError("restore() takes a pardyn.Snapshot (from Simulation.snapshot()), "
                            "not %s" % type(snapshot).__name__)
        self._sim.restore(snapshot._snap)

    # -- particles --
    def _set(self, name, value):
        kinds, dtype, vector = _SETTABLE[name]
        shape = "(%d, %d)" % (self.n, self.dimension) if vector else "(%d,)" % self.n
        what = ("%s must be numbers: a NumPy array or a list of shape %s (particles in the order "
                "of their ids)" % (name, shape))
        try:
            a = _np.asarray(value)
        except (ValueError, TypeError) as e:  # ragged lists
            raise ValueError("%s; %s" % (what, e)) from None
        if a.dtype.kind not in kinds:
            if name == "types" and a.dtype.kind == "f":
                raise TypeError("types must be integers, not %s: a float array is refused even "
                                "when its values are whole; convert it with "
                                "numpy.asarray(t).astype(int)" % a.dtype)
            got = {"U": "strings", "S": "bytes", "b": "bools", "c": "complex numbers",
                   "O": "Python objects"}.get(a.dtype.kind, str(a.dtype))
            raise TypeError("%s, not %s" % (what, got))
        if a.ndim != (2 if vector else 1) or a.shape[0] != self.n or \
                (vector and a.shape[1] != self.dimension):
            raise ValueError("%s must have shape %s (particles in the order of their ids), not %s"
                             % (name, shape, a.shape))
        if name == "types" and a.size and (a.min() < 0 or a.max() > 1000000):
            k = int(_np.argmax((a < 0) | (a > 1000000)))
            raise ValueError("types[%d] = %d: types are whole numbers from 0 to 1000000"
                             % (k, a[k]))
        self._sim.set(name, _np.ascontiguousarray(a, dtype=dtype))

    @property
    def positions(self):
        """Positions, shape (n, dimension), in the order of particle ids (a copy; assign an
        array or a list to change them)."""
        return self._sim.get("positions")

    @positions.setter
    def positions(self, value):
        self._set("positions", value)

    @property
    def velocities(self):
        """Velocities, shape (n, dimension) (a copy; assign an array or a list to change them)."""
        return self._sim.get("velocities")

    @velocities.setter
    def velocities(self, value):
        self._set("velocities", value)

    @property
    def forces(self):
        """Forces m a on each particle, shape (n, dimension), of the current positions."""
        return self._sim.get("forces")

    @property
    def potential_energies(self):
        """Potential energy of each particle, shape (n,): half of each pair's energy plus the
        external fields'; the sum is thermo()["potential"]."""
        return self._sim.get("potential_energies")

    @property
    def virials(self):
        """Virial of each particle, shape (n,): the sum over its pairs of r_ij . F_ij / 2 (and
        the external fields' share); the sum W gives the pressure (2 K + W) / (dimension V)."""
        return self._sim.get("virials")

    @property
    def masses(self):
        """Masses, shape (n,) (a copy; assign to change them)."""
        return self._sim.get("masses")

    @masses.setter
    def masses(self, value):
        self._set("masses", value)

    @property
    def types(self):
        """Particle types (int32), shape (n,) (a copy; assign integers to change them)."""
        return self._sim.get("types")

    @types.setter
    def types(self, value):
        self._set("types", value)

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
    device = property(lambda self: self._sim.device,
                      doc="The GPU of a CUDA run (0, 1, ...); None on the CPU.")
    precision = property(lambda self: self._sim.precision, doc='"float" or "double".')
    steps = property(lambda self: self._sim.steps, doc="The scenario's simulation.steps.")
    output_dir = property(lambda self: self._sim.output_dir, doc="The output folder.")
    box = property(lambda self: self._sim.box,
                   doc="The box: a dict with lo, hi (lists) and boundary (periodic, wall, open).")
    scenario_toml = property(lambda self: self._sim.scenario_toml,
                             doc="The resolved scenario (every key with its value, the current "
                                 "parameters) as TOML.")
    closed = property(lambda self: self._sim.closed, doc="Whether close() has freed the run.")

    def __repr__(self):
        return "<pardyn.Simulation %dD, %d particles, %s, step %d, time %g>" % (
            self.dimension, self.n, self.backend, self.step, self.time)


class Plugin:
    """One [[potential]], [[modifier]] or the [integrator] of a Simulation: sim.potentials[k],
    sim.modifiers[k], sim.integrator.

      kind, index, type   "potential", its number, "lennard_jones"
      params              every parameter with its current value (a dict, a copy)
      p.epsilon           one parameter's value; p.epsilon = 1.2 changes it
      p.set(epsilon=1.2, sigma=1.1)   several at once (checked together)

    A change goes through Simulation.configure: checked as in a scenario file, it applies from
    the next step on."""

    __slots__ = ("_simulation", "_kind", "_index")

    def __init__(self, simulation, kind, index):
        object.__setattr__(self, "_simulation", simulation)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_index", index)

    kind = property(lambda self: self._kind, doc='"potential", "modifier" or "integrator".')
    index = property(lambda self: self._index, doc="Its number among the sections of its kind.")

    @property
    def type(self):
        """The plugin's name, as in the scenario's type = "..."."""
        kinds = self._simulation._sim.sections()
        return kinds["integrator"] if self._kind == "integrator" else kinds[self._kind][self._index]

    @property
    def params(self):
        """Every parameter with its current value (a copy)."""
        return self._simulation._sim.params(self._kind, self._index)

    def _key(self, name):
        if self._kind == "integrator":
            return "integrator." + name
        return "%s.%d.%s" % (self._kind, self._index, name)

    def set(self, **values):
        """Changes parameters from the next step on; see Simulation.configure."""
        self._simulation.configure({self._key(k): v for k, v in values.items()})

    def _unknown(self, name, params):
        near = _difflib.get_close_matches(name, list(params), n=1)
        return ("%s %s has no parameter %r%s; its parameters: %s"
                % (self._kind, self.type, name,
                   " (did you mean %r?)" % near[0] if near else "", ", ".join(sorted(params))))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        params = self.params
        if name in params:
            return params[name]
        raise AttributeError(self._unknown(name, params))

    def __setattr__(self, name, value):
        if name in ("kind", "index", "type", "params"):
            raise AttributeError("%s is read-only" % name)
        params = self.params
        if name not in params:
            raise AttributeError(self._unknown(name, params))
        self.set(**{name: value})

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self.params))

    def __repr__(self):
        shown = ", ".join("%s=%r" % kv for kv in sorted(self.params.items()))
        where = "integrator" if self._kind == "integrator" else "%s %d" % (self._kind, self._index)
        return "<pardyn.Plugin %s %s: %s>" % (where, self.type, shown)


class Snapshot:
    """The whole state of a run at one step, in memory (Simulation.snapshot()): particles with
    their forces, step, time, the integrator's and modifiers' states and the parameters in
    effect; restore it with Simulation.restore(snapshot). Its particles can be read as arrays
    (copies, in the order of particle ids): positions, velocities, forces, masses, types, images,
    ids. It is a host copy of those arrays (in double precision) and of the plugins' states."""

    __slots__ = ("_snap",)

    def __init__(self, snap):
        self._snap = snap

    step = property(lambda self: self._snap.step, doc="The step of the state.")
    time = property(lambda self: self._snap.time, doc="Its simulation time.")
    n = property(lambda self: self._snap.n, doc="The number of particles.")
    dimension = property(lambda self: self._snap.dimension, doc="2 or 3.")
    positions = property(lambda self: self._snap.get("positions"), doc="Positions (n, dim).")
    velocities = property(lambda self: self._snap.get("velocities"), doc="Velocities (n, dim).")
    forces = property(lambda self: self._snap.get("forces"), doc="Forces m a (n, dim).")
    masses = property(lambda self: self._snap.get("masses"), doc="Masses (n,).")
    types = property(lambda self: self._snap.get("types"), doc="Types (n,).")
    images = property(lambda self: self._snap.get("images"), doc="Image counts (n, dim).")
    ids = property(lambda self: self._snap.get("ids"), doc="Ids (n,).")

    def __repr__(self):
        return "<pardyn.Snapshot step %d, time %g, %d particles>" % (self.step, self.time, self.n)
