"""The environment API scripts touch first, and `ember run` executing an unchanged torch script."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
from compare import assert_same_error

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
