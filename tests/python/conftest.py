"""The Python module's tests (ctest -L python): the build's package comes first on PYTHONPATH and the
attntrace binary beside it is the reference, named by ATTNTRACE_BINARY (tests/CMakeLists.txt)."""
import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
LESSONS = sorted((SOURCE_DIR / "lessons").glob("*.json"))
TINY_GPT2 = SOURCE_DIR / "tests" / "models" / "tiny-gpt2"


def attntrace_cli(*args, check=True):
    """The attntrace command of the same build, its standard output as text."""
    binary = os.environ.get("ATTNTRACE_BINARY")
    if not binary:
        pytest.skip("ATTNTRACE_BINARY is not set (run through ctest)")
    env = dict(os.environ, NO_COLOR="1", COLUMNS="99999", ATTNTRACE_NO_PROGRESS="1")
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, env=env, cwd=SOURCE_DIR)
    if check and done.returncode != 0:
        raise AssertionError(f"attntrace {' '.join(map(str, args))}: exit {done.returncode}: {done.stderr}")
    return done


def read_npy_export(folder):
    """index.json of `attntrace export --npy` and each step's array, by name (None: no values)."""
    import numpy as np

    index = json.loads((folder / "index.json").read_text())
    arrays = {s["name"]: (np.load(folder / s["file"]) if s["file"] else None) for s in index["steps"]}
    return index, arrays
