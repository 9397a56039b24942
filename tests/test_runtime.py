"""The environment API scripts touch first, and `ember run` executing an unchanged torch script."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

QUERIES = [
    lambda L: L.cuda.is_available(),
    lambda L: L.cuda.device_count(),
    lambda L: L.cuda.is_initialized(),
    lambda L: L.cuda.manual_seed_all(0),
    lambda L: L.cuda.manual_seed(0),
    lambda L: L.cuda.empty_cache(),
    lambda L: L.backends.mps.is_available(),
    lambda L: L.backends.mps.is_built(),
    lambda L: L.backends.cudnn.is_available(),
    lambda L: L.backends.cudnn.benchmark,
    lambda L: L.backends.cudnn.deterministic,
    lambda L: L.backends.cudnn.enabled,
    lambda L: L.backends.cuda.matmul.allow_tf32,
    lambda L: L.are_deterministic_algorithms_enabled(),
    lambda L: L.device("cuda").type,
    lambda L: str(L.device("cuda:1")),
    lambda L: repr(L.device("cpu")),
    lambda L: L.device("cpu") == L.device("cpu"),
]


@pytest.mark.parametrize("i", range(len(QUERIES)))
def test_queries_match_cpu_only_torch(i):
    assert QUERIES[i](ember) == QUERIES[i](torch)


CUDA_ERRORS = [
    lambda L: L.zeros(2, device="cuda"),
    lambda L: L.zeros(2, device=L.device("cuda", 0)),
    lambda L: L.tensor([1.0], device="cuda:0"),
    lambda L: L.zeros(2).cuda(),
    lambda L: L.cuda.current_device(),
    lambda L: L.cuda.get_device_name(),
    lambda L: L.device("tpu"),
]


@pytest.mark.parametrize("i", range(len(CUDA_ERRORS)))
def test_cuda_errors(i):
    assert_same_error(CUDA_ERRORS[i], match_message=i != 6)


def test_settable_flags_and_threads():
    ember.backends.cudnn.benchmark = True
    ember.backends.cudnn.deterministic = True
    assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
    ember.backends.cudnn.benchmark = ember.backends.cudnn.deterministic = False
    old = ember.get_num_threads()
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    ember.set_num_threads(old)
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(False)
    assert isinstance(ember.__version__, str) and ember.__version__.split(".")[0] == "2"


@pytest.mark.parametrize("path", ["", ".nn", ".nn.functional", ".nn.init", ".optim", ".optim.lr_scheduler",
                                  ".utils.data", ".linalg", ".autograd", ".cuda"])
def test_missing_attribute_is_named(path):
    import importlib

    module = importlib.import_module("ember" + path)
    with pytest.raises(AttributeError, match=f"ember does not implement torch{path}.no_such_thing yet"):
        module.no_such_thing  # noqa: B018


SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn
    from torch import Tensor
    assert torch.__name__ == "ember" and nn.__name__ == "ember.nn"
    assert isinstance(torch.zeros(2), Tensor) and not torch.cuda.is_available()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.arange(6.0, device=device).view(2, 3).requires_grad_()
    (x * x).sum().backward()
    print("grad", x.grad.tolist(), "args", sys.argv[1:])
    try:
        import torch.no_such_module
    except ModuleNotFoundError as e:
        print(e)
""")


def test_ember_run_executes_unchanged_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script), "--epochs", "1"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "grad [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]] args ['--epochs', '1']" in out.stdout
    assert "ember does not implement torch.no_such_module yet" in out.stdout


# ---- names under the alias (issue 16, item 6) -------------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(ember.__file__))


def _run(args, cwd, timeout=180):
    """Run `python args...` in a fresh interpreter that finds ember; stdout, with addresses masked."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


# Everything a script prints or compares that carries the package's name, one expression a line.
NAMES_SCRIPT = textwrap.dedent('''
    import re
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    score = torch.tensor(17.0)
    EXPRESSIONS = """
    f"{score}" | f"{score:.3f}" | f"{x.sum() / 4:6.2f}" | f"{torch.tensor(3)}" | f"{torch.tensor(True)}"
    f"{x}" | f"{nn.Parameter(score)}" | "{}".format(score) | f"{torch.tensor(2.5, dtype=torch.bfloat16)}"
    str(x.dtype) | repr(torch.int64) | repr(torch.bfloat16) | x.type()
    torch.zeros(2, dtype=torch.long).type()
    torch.zeros(1, dtype=torch.bool).type() | torch.typename(x) | torch.typename(nn.Linear(1, 1))
    str(x.shape) | repr(torch.Size([])) | str(x.size()) | repr(torch.max(x, 1)) | repr(torch.sort(x))
    repr(x.max(dim=0)) | str(type(torch.max(x, 1))) | str(torch.return_types.topk) | str(type(x))
    str(torch.Tensor) | str(type(x.dtype)) | str(type(x.shape)) | str(torch.dtype) | str(torch.Size)
    str(torch.device) | repr(torch.device("cpu")) | str(x.device) | repr(torch.channels_last)
    repr(torch.contiguous_format) | str(x.layout) | repr(torch.strided) | str(type(torch.strided))
    str(type(nn.Linear(1, 1))) | str(nn.Linear) | str(torch.optim.SGD) | str(type(nn.Parameter(x)))
    str(torch.utils.data.DataLoader) | str(torch.optim.lr_scheduler.StepLR) | str(type(nn.Sequential()))
    str(x.untyped_storage()).splitlines()[-1] | str(type(torch.Generator())) | repr(torch.Generator())
    str(torch.Generator) | str(type(x.requires_grad_().mul(2).grad_fn)) | str(type(x.sum().grad_fn))
    str(type(x.mul(2).grad_fn.next_functions[0][0])) | str(torch.FloatTensor) | str(type(torch.FloatTensor))
    torch.FloatTensor.__module__ | str(torch.LongTensor) | repr(torch.FloatTensor.dtype)
    str(torch.autograd.Function) | str(type(torch.optim.SGD([nn.Parameter(x)], lr=0.1)))
    str(torch.version.cuda) | str(torch.version.hip) | str(torch.version.debug)
    str(torch.version.__version__ == torch.__version__) | str(type(torch.version.git_version))
    """
    ERRORS = """
    torch.load(123) | x.type("torch.NoSuchTensor") | x.type("FloatTensor") | torch.FloatTensor("a")
    nn.Module().register_parameter("w", x) | f"{x:.2f}" | f"{nn.Parameter(score):.2f}"
    setattr(nn.Linear(1, 1), "weight", x) | setattr(nn.Module(), "m", 3) | torch.FloatTensor(2.5)
    torch.FloatTensor(torch.zeros(2, dtype=torch.long)) | nn.Linear(1, 1).load_state_dict({"weight": 1})
    torch.load(__import__("io").BytesIO(b"xx"), map_location={})
    """
    for text in EXPRESSIONS.replace("\\n", "|").split("|"):
        if text.strip():
            print(text.strip(), "=>", re.sub(r"0x[0-9a-f]+", "0x?", eval(text)))
    for text in ERRORS.replace("\\n", "|").split("|"):
        if text.strip():
            try:
                eval(text)
                print(text.strip(), "=> no error")
            except Exception as e:
                print(text.strip(), "=>", type(e).__name__, e)
''')


def test_alias_prints_what_torch_prints(tmp_path):
    script = tmp_path / "names.py"
    script.write_text(NAMES_SCRIPT)
    expected = _run([str(script)], tmp_path)  # real torch
    got = _run(["-m", "ember", "run", str(script)], tmp_path)
    assert len(got) == len(expected) > 80
    for e, t in zip(got, expected):
        assert e == t


def test_plain_ember_says_ember_and_installs_nothing(tmp_path):
    script = textwrap.dedent("""
        import sys
        import ember
        from ember import _naming, _torch_alias
        assert _naming.prefix == "ember" and _torch_alias._finder not in sys.meta_path
        assert _torch_alias._SHIM_DIR not in sys.path and "torch" not in sys.modules
        x = ember.ones(2)
        print(x.dtype, x.type(), x.shape, type(x), ember.FloatTensor, ember.strided, ember.version.cuda)
        print(repr(ember.max(ember.ones(2, 2), 1)).splitlines()[0], type(ember.nn.Linear(1, 1)))
    """)
    path = tmp_path / "plain.py"
    path.write_text(script)
    assert _run([str(path)], tmp_path) == [
        "ember.float32 ember.FloatTensor ember.Size([2]) <class 'ember.Tensor'> <class 'ember.FloatTensor'> "
        "ember.strided None",
        "ember.return_types.max( <class 'ember.nn.modules.linear.Linear'>"]


def test_install_and_uninstall_flip_the_names(tmp_path):
    script = textwrap.dedent("""
        import ember
        from ember import _torch_alias
        before = (str(ember.float32), ember.zeros(1).type(), str(ember.Tensor), str(ember.nn.Linear))
        _torch_alias.install()
        import torch
        import torch.optim
        assert torch is ember
        print(torch.float32, torch.zeros(1).type(), torch.Tensor, torch.nn.Linear, torch.optim.Adam)
        _torch_alias.uninstall()
        print((str(ember.float32), ember.zeros(1).type(), str(ember.Tensor), str(ember.nn.Linear)) == before,
              ember.optim.Adam)
    """)
    path = tmp_path / "flip.py"
    path.write_text(script)
    assert _run([str(path)], tmp_path) == [
        "torch.float32 torch.FloatTensor <class 'torch.Tensor'> <class 'torch.nn.modules.linear.Linear'> "
        "<class 'torch.optim.adam.Adam'>",
        "True <class 'ember.optim.adam.Adam'>"]


def test_distributed_guard():
    # ember.distributed runs on MPI: available, as in torch; a name it lacks fails naming torch's
    assert ember.distributed.is_available() is torch.distributed.is_available() is True
    with pytest.raises(AttributeError, match="ember does not implement torch.distributed.send_object_list"):
        ember.distributed.send_object_list  # noqa: B018


def test_version_module():
    assert ember.version.__version__ == ember.__version__
    assert ember.__version__.startswith(torch.__version__[:6])
    assert (ember.version.cuda, ember.version.hip, ember.version.debug) == (None, None, False)
    assert sorted(ember.version.__all__) == sorted(torch.version.__all__)
    assert isinstance(ember.version.git_version, str)


@pytest.mark.parametrize("spec", ["", ".3f", "6.2f", ">8", "e", ".0%"])
@pytest.mark.parametrize("make", [lambda L: L.tensor(17.0), lambda L: L.tensor(0.125, dtype=L.float64),
                                  lambda L: L.tensor(3), lambda L: L.tensor(2.0, requires_grad=True) * 2,
                                  lambda L: L.tensor([1.0, 2.0]), lambda L: L.nn.Parameter(L.tensor(1.5)),
                                  lambda L: L.tensor(True)])
def test_format_matches_torch(make, spec):
    def fmt(L):
        return format(make(L), spec)

    try:
        expected = fmt(torch)
    except Exception:  # noqa: BLE001 - then ember must raise the same
        assert_same_error(lambda L: fmt(L))
        return
    assert fmt(ember).replace("ember.", "torch.") == expected


# ---- legacy tensor types: torch.FloatTensor and friends ----------------------------------------------------

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]

LEGACY_CALLS = [
    lambda T, L: T(), lambda T, L: T([1, 0, 1]), lambda T, L: T([[1, 2], [3, 4]]), lambda T, L: T((1, 0)),
    lambda T, L: T(2, 3).shape, lambda T, L: T(L.Size([4])).shape, lambda T, L: T(0).shape,
    lambda T, L: T(size=(2,)).shape, lambda T, L: T([1], device="cpu"), lambda T, L: T(L.tensor(1)),
    lambda T, L: T(__import__("numpy").ones(2)), lambda T, L: T(L.tensor([1.5, 2.0])),
    lambda T, L: T(L.ones(2, dtype=T.dtype)), lambda T, L: T(-1), lambda T, L: T(2.5), lambda T, L: T("a"),
    lambda T, L: T(True), lambda T, L: T([1], [2]), lambda T, L: T(2, dtype=L.long),
    lambda T, L: T(2, device="cuda"), lambda T, L: T.dtype, lambda T, L: T.__name__,
    lambda T, L: T.is_sparse, lambda T, L: issubclass(T, L.Tensor), lambda T, L: len(T.__mro__),
]


@pytest.mark.parametrize("name", LEGACY)
@pytest.mark.parametrize("i", range(len(LEGACY_CALLS)))
def test_legacy_constructors(name, i):
    check(lambda L: LEGACY_CALLS[i](getattr(L, name), L))


LEGACY_CHECKS = [
    lambda L, x, T: isinstance(x, T), lambda L, x, T: isinstance(L.nn.Parameter(x.float()), T),
    lambda L, x, T: isinstance(x.numpy(), T), lambda L, x, T: x.type(T), lambda L, x, T: x.type(T) is x,
    lambda L, x, T: x.type("torch." + T.__name__), lambda L, x, T: x.type(T.dtype).type().partition(".")[2],
    lambda L, x, T: L.tensor([1.0, 2.0]).type(T).type().partition(".")[2],
]


@pytest.mark.parametrize("name", LEGACY)
@pytest.mark.parametrize("i", range(len(LEGACY_CHECKS)))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_legacy_isinstance_and_type(name, i, dtype):
    x = np.array([1, 0, 2]).astype(dtype)
    check(lambda L, x: LEGACY_CHECKS[i](L, x, getattr(L, name)), x)


def test_legacy_alias_and_storage():
    def fn(L):
        x = L.arange(4.0, requires_grad=True)
        y = L.FloatTensor(x)
        z = L.IntTensor(x.untyped_storage())
        return y.data_ptr() == x.data_ptr(), y.requires_grad, y, z, z.data_ptr() == x.data_ptr()

    check(fn)
    from ember._storage import _warned  # `.storage()` warns once per process; leave that to its own test

    before = _warned[0]
    try:
        assert_same_error(lambda L: L.LongTensor(L.arange(4.0).storage()))
    finally:
        _warned[0] = before


LEGACY_ERRORS = [
    lambda L: L.FloatTensor(2, "a"), lambda L: L.LongTensor([1], 2), lambda L: L.FloatTensor(1, 2, 3, "x"),
    lambda L: L.FloatTensor(foo=1), lambda L: L.FloatTensor([1], foo=1),
    lambda L: L.FloatTensor(size=[2, "a"]),
    lambda L: L.FloatTensor(1, size=(2,)), lambda L: L.BoolTensor([1, "a"], [2]),
]


@pytest.mark.parametrize("i", range(len(LEGACY_ERRORS)))
def test_legacy_constructor_errors(i):
    assert_same_error(LEGACY_ERRORS[i])


# ---- the alias in child processes (issue 16, item 2; NOTE [ The alias in child processes ]) --------------

CHILDREN_SCRIPT = textwrap.dedent('''
    import concurrent.futures
    import multiprocessing as mp
    import os
    import sys

    import torch
    import torch.multiprocessing as tmp
    from torch.utils.data import DataLoader, Dataset


    def where():
        """What `torch` is in this process: ember's package (and its names), or something else."""
        return (os.path.basename(os.path.dirname(torch.__file__)), str(torch.float32))


    class Squares(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return torch.tensor([float(i * i)]), where()[0]


    def square_sum(n):
        return float((torch.arange(float(n)) ** 2).sum()), where()


    def put(q, n):
        q.put(square_sum(n))


    def rank_fn(rank, q):
        q.put((rank,) + square_sum(rank + 3))


    if __name__ == "__main__":
        method = sys.argv[1]
        mp.set_start_method(method)
        batches = [(b.flatten().tolist(), list(w)) for b, w in
                   DataLoader(Squares(), batch_size=3, num_workers=2, persistent_workers=False)]
        print("dataloader", batches)
        q = mp.Queue()
        p = mp.Process(target=put, args=(q, 4))
        p.start()
        print("process", q.get(), p.join() or p.exitcode)
        with mp.Pool(2) as pool:
            print("pool", pool.map(square_sum, [2, 3]))
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context(method)) as ex:
            print("executor", list(ex.map(square_sum, [5])))
        q = tmp.get_context(method).SimpleQueue()
        tmp.start_processes(rank_fn, args=(q,), nprocs=2, start_method=method)
        print("start_processes", sorted([q.get(), q.get()]))
        if method == "spawn":
            q = tmp.get_context("spawn").SimpleQueue()
            tmp.spawn(rank_fn, args=(q,), nprocs=2)
            print("spawn", sorted([q.get(), q.get()]))
''')


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_alias_holds_in_child_processes(tmp_path, method):
    script = tmp_path / "children.py"
    script.write_text(CHILDREN_SCRIPT)
    out = "\n".join(_run(["-m", "ember", "run", str(script), method], tmp_path, timeout=300))
    where = "('ember', 'torch.float32')"  # every child's torch is ember's package, printing torch's names
    assert "dataloader [([0.0, 1.0, 4.0], ['ember', 'ember', 'ember']), ([9.0, 16.0, 25.0], " \
           "['ember', 'ember', 'ember'])]" in out
    assert f"process (14.0, {where}) 0" in out
    assert f"pool [(1.0, {where}), (5.0, {where})]" in out
    assert f"executor [(30.0, {where})]" in out
    assert f"start_processes [(0, 5.0, {where}), (1, 14.0, {where})]" in out
    if method == "spawn":
        assert f"spawn [(0, 5.0, {where}), (1, 14.0, {where})]" in out


def test_multiprocessing_namespace_matches_torch():
    import torch.multiprocessing as tmp

    import ember.multiprocessing as emp

    assert set(tmp.__all__) <= set(emp.__all__)
    for name in tmp.__all__:
        assert hasattr(emp, name), name
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy()
    assert_same_error(lambda L: L.multiprocessing.set_sharing_strategy("no_such_strategy"))
    assert emp.Process is __import__("multiprocessing").Process
    assert emp.spawn.__module__ == "ember.multiprocessing.spawn"


def _raises(i, code):
    if i == 1:
        raise ValueError(f"bad rank {i}")


def _exits(i, code):
    if i == 0:
        sys.exit(code)


def _killed(i, code):
    if i == 1:
        os.kill(os.getpid(), 9)


@pytest.mark.parametrize("fn", [_raises, _exits, _killed])
def test_start_processes_failures_match_torch(fn):
    def run(L):
        try:
            L.multiprocessing.start_processes(fn, args=(3,), nprocs=2, start_method="fork")
        except Exception as e:  # noqa: BLE001 - the failure is what is compared
            return type(e).__name__, str(e).splitlines()[:3] + str(e).splitlines()[-1:], e.error_index, \
                getattr(e, "exit_code", None), getattr(e, "signal_name", None)
        return None

    assert run(ember) == run(torch)
    context = ember.multiprocessing.start_processes(_exits, args=(0,), nprocs=2, join=False,
                                                    start_method="fork")
    while not context.join():
        pass
    assert len(context.pids()) == 2 and all(p.exitcode == 0 for p in context.processes)


def test_spawn_child_of_plain_ember_stays_plain(tmp_path):
    # a script using ember directly did not ask for the alias: its spawn children must not get it either
    script = textwrap.dedent("""
        import multiprocessing as mp
        import sys


        def probe(_):
            import ember
            from ember import _naming, _torch_alias
            return _naming.prefix, _torch_alias._finder in sys.meta_path, _torch_alias._SHIM_DIR in sys.path


        if __name__ == "__main__":
            import ember
            with mp.get_context("spawn").Pool(1) as pool:
                print(pool.map(probe, [0]), str(ember.float32))
    """)
    path = tmp_path / "plain_spawn.py"
    path.write_text(script)
    assert _run([str(path)], tmp_path) == ["[('ember', False, False)] ember.float32"]
