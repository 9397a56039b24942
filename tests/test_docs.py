"""The docs stay true: what they cite is in the repo, and the generated API-coverage page is current.

- Every Markdown file of the repo, and the docstrings and comments of examples/, benchmarks/ and tools/,
  may only point at files the repo carries: Markdown links, `*.md` names and `../` paths must resolve
  inside the repo, and no absolute path of one machine may appear.
- docs/coverage.md is exactly what `python3 tools/coverage.py` writes now, and the walk's rules (what
  counts as torch's public API) pick the names they say they pick.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _repo_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return sorted(set(out.stdout.split("\n")) - {""})
    found = []  # not a git checkout (an sdist): walk the tree
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "__pycache__"]
        found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files]
    return sorted(found)


FILES = _repo_files()
DOCS = [f for f in FILES if f.endswith(".md")
        or (f.endswith(".py") and f.split("/")[0] in ("examples", "benchmarks", "tools"))]

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_MD_NAME = re.compile(r"(?<![\w/.:-])([\w./-]*\w\.md)\b")
_UP_PATH = re.compile(r"(?<![\w.:/])((?:\.\./)+[\w.-][\w./-]*)")
_ABS_PATH = re.compile(r"(?<![\w:/.~])/(?:work|home|tmp|Users|root|mnt)/[\w./-]+")


BASENAMES = {os.path.basename(f) for f in FILES}


def _resolves(doc, target):
    """Whether `target`, cited in `doc`, names a file or folder inside the repo: relative to the citing
    file (as Markdown links are) or to the repo root (where the README's commands run); a bare file name
    (`architecture.md` in a folder listing) names a file the repo has somewhere."""
    target = target.split("#")[0]
    if not target or ("/" not in target and target in BASENAMES):
        return True
    for base in (os.path.dirname(os.path.join(ROOT, doc)), ROOT):
        path = os.path.normpath(os.path.join(base, target))
        if (path == ROOT or path.startswith(ROOT + os.sep)) and os.path.exists(path):
            return True
    return False


def _citations(text):
    for m in _LINK.finditer(text):
        target = m.group(1)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
            yield target
    yield from (m.group(1) for m in _MD_NAME.finditer(text))
    yield from (m.group(1) for m in _UP_PATH.finditer(text))


@pytest.mark.parametrize("doc", DOCS)
def test_doc_cites_only_what_the_repo_carries(doc):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    dangling = sorted({t for t in _citations(text) if not _resolves(doc, t)})
    assert not dangling, f"{doc} cites paths the repo does not carry: {dangling}"
    absolute = sorted(set(_ABS_PATH.findall(text)))
    assert not absolute, f"{doc} names paths of one machine: {absolute}"


@pytest.mark.parametrize("text, bad", [
    ("see BENCHMARKING.md's method", ["BENCHMARKING.md"]),
    ("copy of the design (`../shared/DESIGN.md`)", ["../shared/DESIGN.md"]),
    ("the design is in DESIGN.md", ["DESIGN.md"]),
    ("docs/ architecture.md (how the pieces fit)", []),
    ("--data ../shared/data/tiny_shakespeare.txt", ["../shared/data/tiny_shakespeare.txt"]),
    ("[the design](docs/nowhere.md)", ["docs/nowhere.md"]),
    ("[ok](docs/architecture.md) and [web](https://example.org/x.md) and [here](#speed)", []),
])
def test_citation_check_catches_what_it_should(text, bad):
    dangling = sorted({t for t in _citations(text) if not _resolves("README.md", t)})
    assert dangling == sorted(bad)


# ---- the API-coverage page ----

def _coverage_module():
    spec = importlib.util.spec_from_file_location("ember_tools_coverage", os.path.join(ROOT, "tools", "coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_coverage_page_is_current():
    # A subprocess: the walk imports many torch submodules this test process should not carry around.
    out = subprocess.run([sys.executable, os.path.join("tools", "coverage.py"), "--check"], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("qualname, category", [
    ("torch.add", None),
    ("torch.trace", None),                      # matrix trace, not tracing
    ("torch.quantile", None),                   # statistics, not quantization
    ("torch.Tensor.nanquantile", None),
    ("torch.nn.init.sparse_", None),            # fills a dense weight
    ("torch.linalg.solve", None),               # only torch.solve was removed
    ("torch.Tensor.cuda", "accelerators"),
    ("torch.Tensor.is_pinned", "accelerators"),
    ("torch.backends_mps_thing", "accelerators"),
    ("torch.quantize_per_tensor", "quantized"),
    ("torch.Tensor.q_scale", "quantized"),
    ("torch.Tensor.to_sparse_csr", "sparse-only"),
    ("torch.sparse_coo_tensor", "sparse-only"),
    ("torch.Tensor.values", "sparse-only"),
    ("torch.sym_int", "TorchScript and compiler internals"),
    ("torch.parse_ir", "TorchScript and compiler internals"),
    ("torch.solve", "removed (only raise)"),
    ("torch.Tensor.volatile", "removed (only raise)"),
])
def test_coverage_categories(qualname, category):
    assert _coverage_module().category(qualname) == category


@pytest.mark.parametrize("namespace, present, absent", [
    # `torch.__all__` omits unique/set_grad_enabled; pybind tensor-model types count, TorchScript IR
    # types, undocumented aten entry points and plain values do not.
    ("torch", ["add", "unique", "set_grad_enabled", "Tensor", "Generator", "dtype", "Size", "no_grad"],
     ["Graph", "Node", "ScriptModule", "batch_norm_elemt", "abs_", "pi", "float32", "nn", "cuda"]),
    ("torch.Tensor", ["add", "add_", "shape", "grad", "mT", "backward"],
     ["__add__", "clamp_min", "cuda", "to_sparse"]),
    ("torch.nn.functional", ["conv2d", "relu", "cross_entropy", "scaled_dot_product_attention"],
     ["Optional", "Callable", "Tensor", "has_torch_function"]),
    ("torch.fft", ["fft", "rfft"], ["Tensor"]),
])
def test_coverage_walk_rules(namespace, present, absent):
    names, _ = _coverage_module().torch_names(namespace)
    assert [n for n in present if n not in names] == []
    assert [n for n in absent if n in names] == []


def test_coverage_presence_is_ember_s():
    cov = _coverage_module()
    assert cov.ember_has("torch", ["add", "no_such_name_in_torch"]) == {"add"}
    assert cov.ember_has("torch.Tensor", ["shape", "add_", "no_such_attr"]) == {"shape", "add_"}
    assert cov.ember_has("torch.no_such_namespace", ["x"]) is None


def test_coverage_ignores_modules_of_another_ember_copy(monkeypatch):
    # An editable install of another checkout answers imports of submodules this checkout lacks.
    import types

    foreign = types.ModuleType("ember._coverage_foreign")
    foreign.__file__ = os.path.join(os.path.dirname(ROOT), "elsewhere", "ember", "_coverage_foreign.py")
    foreign.x = lambda: None
    monkeypatch.setitem(sys.modules, "ember._coverage_foreign", foreign)
    assert _coverage_module().ember_has("torch._coverage_foreign", ["x"]) is None
