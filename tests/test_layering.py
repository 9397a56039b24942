"""The layering rule of docs/architecture.md, checked on the source: only the layers that own a tensor's payload
read or write `Tensor._data`; everything above goes through ops and Tensor methods, so every observable
computation reaches the dispatcher (issue 17, "Everything observable dispatches").

The check parses every `ember/**/*.py` with `ast` and counts attribute accesses named `_data` (`x._data`, read or
written), per file. A file may have them only if it is listed below, with its reason and its exact count.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
EMBER = ROOT / "ember"

#: the layers that own the payload: any number of accesses
OWNERS = {
    "ember/_ops/": "the op kernels' wrappers: unwrap inputs, wrap results",
    "ember/_tensor.py": "the Tensor itself (its slot is `_data`)",
    "ember/_dispatch.py": "the dispatcher: unwraps inputs for kernels and wraps their outputs",
    "ember/_meta.py": "meta payloads: what a tensor holds in place of an array when it has no data",
    "ember/serialization.py": "save/load write and read tensors' bytes",
}

#: files outside those layers with a justified, exact number of accesses
JUSTIFIED = {
    "ember/utils/data/_shared.py": (2, "shared-memory transport: a batch's array is moved into a /dev/shm "
                                       "segment and pickled as a handle (or by value for spawn)"),
    "ember/utils/safetensors.py": (2, "serialization (the safetensors format): the tensors' raw bytes"),
    "ember/_utils.py": (1, "serialization (torch._utils' rebuild helpers): a legacy pickle's BUILD sets a "
                           "tensor's payload to a view of a storage's bytes"),
    # the autograd core is the layer beside the dispatcher: recording reads its outputs' array metadata and
    # aliases payloads (saved outputs, the old value of a tensor written in place) on every recorded op, and
    # the engine's gradient sums and accumulation run NumPy directly when no mode or grad mode can see them
    "ember/autograd/graph.py": (13, "recording: outputs' shape/dtype (direct and general paths, saved-output "
                                    "aliases, per-output metadata) and the backward's grad-metadata checks"),
    "ember/autograd/engine.py": (7, "gradient sums (NOTE [ Summing gradients ]) and AccumulateGrad's in-place "
                                    "accumulation into .grad, without a dispatch"),
    "ember/autograd/copy_slices.py": (2, "an in-place op on a view: the view's old value and the op's output "
                                         "aliased as tensors for the recorded node (NOTE [ CopySlices ])"),
}


def _accesses():
    """{relative path: [line, ...]} of every `._data` attribute access under ember/."""
    found = {}
    for path in sorted(EMBER.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "_data"]
        if lines:
            found[rel] = sorted(lines)
    return found


def test_no_data_access_outside_the_payload_layers():
    problems = []
    for rel, lines in _accesses().items():
        if any(rel.startswith(p) for p in OWNERS):
            continue
        where = ", ".join(f"{rel}:{n}" for n in lines)
        if rel in JUSTIFIED:
            if len(lines) != JUSTIFIED[rel][0]:
                problems.append(f"{rel}: {len(lines)} `._data` accesses, the allow-list says {JUSTIFIED[rel][0]} "
                                f"({where})")
        else:
            problems.append(f"`._data` outside the payload layers (use ops or Tensor methods): {where}")
    assert not problems, "\n".join(problems)


def test_allow_lists_are_not_stale():
    found = _accesses()
    stale = [rel for rel in JUSTIFIED if rel not in found]
    assert not stale, f"no `._data` left in {stale}: remove them from the allow-list in {__file__}"
    for rel in list(OWNERS) + list(JUSTIFIED):
        assert (ROOT / rel).exists(), f"{rel} is allow-listed but does not exist"
