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
    "ember/_subclasses/": "tensor subclasses that own their payload: a fake tensor builds and reads the MetaArray "
                          "it holds in place of data",
}

#: files outside those layers with a justified, exact number of accesses
JUSTIFIED = {
    "ember/utils/data/_shared.py": (2, "shared-memory transport: a batch's array is moved into a /dev/shm "
                                       "segment and pickled as a handle (or by value for spawn)"),
    "ember/utils/data/_fetch.py": (3, "the DataLoader's TensorDataset batch as one np.take per tensor into "
                                      "the batch's buffer (NOTE [ TensorDataset batches in one take ])"),
    "ember/_shared_memory.py": (4, "shared storages: a tensor's array re-pointed into a shared mapping, and "
                                   "sent to another process as a handle (NOTE [ Shared storages ])"),
    "ember/profiler/_recorder.py": (1, "the profiler's memory accounting (NOTE [ Profiled memory ]): which "
                                       "buffer an op's output owns, to count its bytes and see it freed"),
    "ember/utils/safetensors.py": (2, "serialization (the safetensors format): the tensors' raw bytes"),
    "ember/distributed/distributed_c10d.py": (1, "collectives: MPI reads and writes the tensors' arrays in "
                                                 "place (zero copy), through one helper, `_array`"),
    "ember/_utils.py": (1, "serialization (torch._utils' rebuild helpers): a legacy pickle's BUILD sets a "
                           "tensor's payload to a view of a storage's bytes"),
    # the autograd core is the layer beside the dispatcher: recording reads its outputs' array metadata and
    # aliases payloads (saved outputs, the old value of a tensor written in place) on every recorded op, and
    # the engine's gradient sums and accumulation run NumPy directly when no mode or grad mode can see them
    "ember/autograd/graph.py": (13, "recording: outputs' shape/dtype (direct and general paths, saved-output "
                                    "aliases, per-output metadata), the backward's grad-metadata checks, and "
                                    "the alias a saved-tensor unpack hook's result becomes"),
    "ember/autograd/engine.py": (8, "gradient sums (NOTE [ Summing gradients ]) and AccumulateGrad's in-place "
                                    "accumulation into .grad (laid out like the parameter or, with the layout "
                                    "contract relaxed, like the gradient), without a dispatch"),
    "ember/fx/experimental/proxy_tensor.py": (4, "make_fx knows a tensor rewrapped by autograd by its payload's "
                                                 "identity (NOTE [ Payload identity ]): compares objects, reads "
                                                 "no data"),
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


# ---- the layers of docs/architecture.md are the layers of the code -----------------------------------------
# A module imports, at module level, only modules of its own layer or below. (An import inside a function,
# made when it first runs, is how a lower layer reaches an upper one where it must: Tensor's repr and pickling,
# its legacy constructor.) Layers not listed (nn, optim, utils, linalg, serialization, tools) sit on top.
LAYERS = [
    ("ember._dtypes", "ember._device", "ember._size", "ember._naming", "ember._meta", "ember._grad_state",
     "ember.return_types", "ember._native",  # (_native: C kernels over NumPy arrays, below every tensor type)
     "ember._argparse", "ember._argsig_data"),  # (torch's parser errors: import nothing of ember's at module level)
    ("ember._storage",),
    ("ember._tensor", "ember._tensortype", "ember._tensor_str", "ember._generator"),
    ("ember._dispatch", "ember._modes"),
    ("ember.autograd.graph", "ember.autograd.engine", "ember.autograd.grad_mode", "ember.autograd._inference",
     "ember.autograd.copy_slices", "ember.autograd.anomaly_mode", "ember.autograd.graph_print",
     "ember.autograd.graph_edges", "ember.autograd.graph_memory"),
    ("ember._ops",),
]


def _layer(module):
    for rank, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return rank
    return len(LAYERS)


def _module_level_imports(path, module):
    pkg = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            yield from ([f"{base}.{a.name}" for a in node.names] if not node.module or base == "ember" else [base])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ember"):
            yield node.module


def test_core_modules_import_only_their_layer_or_below():
    import ember

    root = pathlib.Path(ember.__file__).parent
    upward = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(("ember",) + path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        rank = _layer(module)
        if rank == len(LAYERS):
            continue
        for target in _module_level_imports(path, module):
            if _layer(target) > rank:
                upward.append(f"{module} imports {target}")
    assert not upward, "upward imports at module level: " + "; ".join(upward)
