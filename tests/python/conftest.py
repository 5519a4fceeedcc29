# SPDX-License-Identifier: BSD-3-Clause
# The pytest suite of the Python module (ctest: python.module). Run by hand from the repository root:
#   PYTHONPATH=build/python PARDYN_BUILD_DIR=build /usr/bin/python3 -m pytest tests/python
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("PARDYN_BUILD_DIR", ROOT / "build")).resolve()


@pytest.fixture
def lj2d(tmp_path):
    """A small 2D Lennard-Jones liquid (the LAMMPS comparison's scenario, scaled down) as a dict."""
    return {
        "simulation": {"dimension": 2, "steps": 200, "seed": 5, "output": str(tmp_path / "out")},
        "box": {"lo": [0.0, 0.0], "hi": [20.549707, 17.796569], "boundary": "periodic"},
        "particles": [{"generator": "lattice", "kind": "hexagonal", "density": 0.7,
                       "temperature": 1.0}],
        "potential": [{"type": "lennard_jones", "rcut": 2.5}],
        "integrator": {"type": "velocity_verlet", "dt": 0.005},
        "output": [{"type": "thermo", "interval": 50}],
    }
