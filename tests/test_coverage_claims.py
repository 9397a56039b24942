"""Every torch name ember claims (tools/claimed_names.txt, written by tools/coverage.py) is still there.

See NOTE [ Claimed names ] in tools/coverage.py: the list is committed with the coverage page, and this test,
which needs no torch, fails when a change removes a name ember has claimed.
"""

import importlib.util
import os
from collections import defaultdict

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _coverage_module():
    spec = importlib.util.spec_from_file_location("ember_tools_coverage", os.path.join(ROOT, "tools", "coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _claims():
    by_namespace = defaultdict(list)
    with open(os.path.join(ROOT, "tools", "claimed_names.txt"), encoding="utf-8") as f:
        for line in f:
            namespace, name = line.split()
            by_namespace[namespace].append(name)
    return by_namespace


CLAIMS = _claims()


def test_the_list_is_not_empty():
    assert sum(len(v) for v in CLAIMS.values()) > 1000 and "torch" in CLAIMS


@pytest.mark.parametrize("namespace", sorted(CLAIMS))
def test_claimed_names_are_present(namespace):
    names = CLAIMS[namespace]
    present = _coverage_module().ember_has(namespace, names) or set()
    lost = sorted(set(names) - present)
    assert not lost, f"ember no longer has these {namespace} names it claimed: {lost}"
