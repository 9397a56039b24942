"""ember's capture under CPython 3.10 and 3.12 (the issue asks for 3.10 to 3.12; CI has only 3.11).

Torch is installed for 3.11 only, so the other interpreters run tests/compiler/cross_version_checks.py:
ember imports there; every case of dynamo_cases.py (graph breaks in inlined calls, loops, with blocks,
try/except, generators, contextmanager, ...) gives torch's graph and break counts and torch's results, as
saved by torch on 3.11 in dynamo_cases_ref.npz (test_dynamo.py keeps that file equal to torch's figures);
every OpInfo op and the examples' models compile to what eager ember computes. Each interpreter needs
NumPy. They are found on PATH as python3.10 / python3.12, under pyenv's versions
folder, or named in EMBER_TEST_PYTHONS (paths separated by os.pathsep); where none is found the test is
skipped, saying so.
"""

import glob
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _candidates(version):
    named = [p for p in os.environ.get("EMBER_TEST_PYTHONS", "").split(os.pathsep) if p]
    found = shutil.which(f"python{version}")
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    under_pyenv = sorted(glob.glob(os.path.join(pyenv, "versions", f"{version}.*", "bin", "python")))
    return named + ([found] if found else []) + under_pyenv


def _interpreter(version):
    """A working python`version` with NumPy, or (None, why not)."""
    tried = []
    for exe in _candidates(version):
        try:
            r = subprocess.run(
                [exe, "-c", "import sys, numpy; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True, text=True, timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            tried.append(f"{exe}: {e}")
            continue
        if r.returncode == 0 and r.stdout.strip() == version:
            return exe, None
        tried.append(f"{exe}: {(r.stderr.strip().splitlines() or [r.stdout.strip()])[-1]}")
    return None, f"no CPython {version} with NumPy ({'; '.join(tried) or 'none on PATH or under pyenv'})"


@pytest.mark.parametrize("version", ["3.10", "3.12"])
def test_capture_matches_torch_under_python(version):
    if sys.version_info[:2] == tuple(int(v) for v in version.split(".")):
        pytest.skip(f"this interpreter is {version}: test_dynamo.py runs the cases against torch directly")
    exe, why = _interpreter(version)
    if exe is None:
        pytest.skip(why)
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run(
        [exe, os.path.join(HERE, "cross_version_checks.py")],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert r.returncode == 0, f"python {version}:\n{r.stdout}\n{r.stderr[-3000:]}"
    summary = [ln for ln in r.stdout.splitlines() if ln.startswith(f"python {version}")]
    assert len(summary) == 4 and all(ln.endswith("agree") or "captured" in ln for ln in summary), r.stdout
