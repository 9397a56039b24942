"""SummaryWriter against torch's: the same calls write event files that tensorboard reads back the same.

Each test logs with ember's and torch's writer from the same NumPy data, reads both directories with
tensorboard's own event-file loader and compares every summary value proto (tags, steps, values, images,
plugin data), ignoring only wall times. One test starts the real `tensorboard` server and reads the
scalars back over HTTP.
"""

import glob
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
import torch
import torch.utils.tensorboard as ttb

import ember
import ember.utils.tensorboard as etb

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402


def read_runs(log_dir):
    """{run (relative dir): [(step, tag, serialized value without wall time), ...]} for every event file."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        run = os.path.relpath(os.path.dirname(path), log_dir)
        events = runs.setdefault(run, [])
        for ev in EventFileLoader(path).Load():
            if ev.HasField("file_version"):
                events.append((ev.step, "file_version", ev.file_version))
            if ev.HasField("session_log"):
                events.append((ev.step, "session_log", ev.session_log.status))
            for v in ev.summary.value:
                events.append((ev.step, v.tag, v.SerializeToString(deterministic=True)))
    return runs


def normalise_runs(runs):
    # add_hparams names its sub-run by time; compare those runs by order instead
    out = {}
    for run, events in runs.items():
        parts = run.split(os.sep)
        key = os.sep.join("<time>" if _is_time(p) else p for p in parts)
        out.setdefault(key, []).extend(events)
    return out


def _is_time(s):
    try:
        return float(s) > 1e9
    except ValueError:
        return False


def write_both(tmp_path, log, **kwargs):
    """Run `log(writer, lib)` with ember's and torch's writer; return both read-back logs."""
    got = {}
    for name, lib, mod in (("ember", ember, etb), ("torch", torch, ttb)):
        d = str(tmp_path / name)
        with mod.SummaryWriter(d, **kwargs) as w:
            log(w, lib)
        got[name] = normalise_runs(read_runs(d))
    return got["ember"], got["torch"]


RNG = np.random.default_rng(0)
VALUES = RNG.standard_normal(1000).astype(np.float32)
IMAGE = RNG.random((3, 8, 10)).astype(np.float32)
IMAGES = RNG.random((4, 3, 6, 5)).astype(np.float32)
LABELS = (RNG.random(50) > 0.5)
PRED = RNG.random(50).astype(np.float32)
MESH = RNG.random((1, 4, 3)).astype(np.float32)


def log_everything(w, lib):
    for step in range(5):
        w.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.1 * step, step)
        w.add_scalar("new", 2.5 * step, step, new_style=True)
        w.add_scalar("dbl", 1.0 / 3 + step, step, new_style=True, double_precision=True)
    w.add_scalars("run/14", {"a": 1.0, "b": lib.tensor(2.0)}, 3)
    w.add_histogram("hist", lib.from_numpy(VALUES), 1)
    w.add_histogram("hist_np", VALUES, 2, bins="auto")
    w.add_histogram("hist_max", lib.from_numpy(VALUES), 3, bins=30, max_bins=10)
    w.add_histogram_raw("raw", min=-1.0, max=1.0, num=4, sum=0.5, sum_squares=1.5,
                        bucket_limits=[-0.5, 0.0, 1.0], bucket_counts=[1, 2, 1], global_step=1)
    w.add_image("img", lib.from_numpy(IMAGE), 0)
    w.add_image("img_hwc", lib.from_numpy(IMAGE.transpose(1, 2, 0)), 0, dataformats="HWC")
    w.add_image("img_u8", lib.from_numpy((IMAGE * 255).astype(np.uint8)), 0)
    w.add_images("imgs", lib.from_numpy(IMAGES), 0)
    w.add_image_with_boxes("boxes", lib.from_numpy(IMAGE), lib.tensor([[1.0, 1.0, 5.0, 6.0]]), 0)
    w.add_text("note", "**lr** = 0.1", 0)
    w.add_pr_curve("pr", lib.from_numpy(LABELS), lib.from_numpy(PRED), 0)
    w.add_pr_curve("pr_w", lib.from_numpy(LABELS), lib.from_numpy(PRED), 1, num_thresholds=11,
                   weights=np.linspace(0.5, 1.5, 50).astype(np.float32))  # torch takes NumPy weights
    w.add_tensor("t32", lib.from_numpy(VALUES[:6].reshape(2, 3)), 0)
    w.add_tensor("t64", lib.from_numpy(np.arange(4, dtype=np.int64)), 0)
    w.add_custom_scalars_multilinechart(["loss", "lr"], title="both")
    w.add_mesh("mesh", lib.from_numpy(MESH), colors=lib.from_numpy((MESH * 255).astype(np.uint8)), global_step=0)
    w.add_audio("snd", lib.from_numpy(np.sin(np.linspace(0, 20, 800)).astype(np.float32)), 0,
                sample_rate=8000)


def test_event_files_equal_torchs(tmp_path):
    mine, theirs = write_both(tmp_path, log_everything)
    assert mine.keys() == theirs.keys()
    for run in theirs:
        assert [e[:2] for e in mine[run]] == [e[:2] for e in theirs[run]], run
        for a, b in zip(mine[run], theirs[run]):
            assert a == b, (run, a[:2])


def test_hparams_and_purge_step(tmp_path):
    def log(w, lib):
        w.add_hparams({"lr": 0.1, "bsize": 4, "opt": "adam", "bn": True, "t": lib.tensor([0.5])},
                      {"hparam/accuracy": 0.9}, hparam_domain_discrete={"opt": ["adam", "sgd"]},
                      run_name="r1")
        w.add_hparams({"lr": 0.2}, {"hparam/accuracy": 0.8})
    mine, theirs = write_both(tmp_path, log, purge_step=7)
    assert mine == theirs
    assert any(tag == "session_log" for _, tag, _ in theirs["."])


def test_hparams_errors():
    w = etb.SummaryWriter.__new__(etb.SummaryWriter)  # errors come before any file is touched
    for args in (([1], {}), ({}, [1])):
        with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary."):
            w.add_hparams(*args)
    from torch.utils.tensorboard.summary import hparams as thparams

    from ember.utils.tensorboard.summary import hparams
    for bad in ({"lr": [1]}, {"x": [0.1]}, [1]):
        with pytest.raises(TypeError) as e:
            hparams({"lr": 0.1}, {}, bad)
        with pytest.raises(TypeError) as t:
            thparams({"lr": 0.1}, {}, bad)
        assert str(e.value) == str(t.value)


def test_scalar_errors_match_torch(tmp_path):
    w = etb.SummaryWriter(str(tmp_path / "e"))
    tw = ttb.SummaryWriter(str(tmp_path / "t"))
    with pytest.raises(AssertionError) as e:
        w.add_scalar("x", ember.ones(2))
    with pytest.raises(AssertionError) as t:
        tw.add_scalar("x", torch.ones(2))
    assert " ".join(str(e.value).split()) == " ".join(str(t.value).split())
    w.close()
    w.close()  # twice is fine
    w.add_scalar("after", 1.0, 0)  # a closed writer opens a new file
    w.close()
    tw.close()
    assert [e[1] for e in read_runs(str(tmp_path / "e"))["."]] == ["file_version", "file_version", "after"]


def test_embedding_files_equal_torchs(tmp_path):
    mat = RNG.standard_normal((6, 3)).astype(np.float32)
    imgs = RNG.random((6, 3, 4, 4)).astype(np.float32)
    for name, lib, mod in (("ember", ember, etb), ("torch", torch, ttb)):
        with mod.SummaryWriter(str(tmp_path / name)) as w:
            w.add_embedding(lib.from_numpy(mat), metadata=list("abcdef"), label_img=lib.from_numpy(imgs),
                            tag="my/emb", global_step=2)
            w.add_embedding(lib.from_numpy(mat[:, :2]), metadata=[[1, "x"]] * 6, metadata_header=["n", "s"])
    for f in ("00002/my%2femb/tensors.tsv", "00002/my%2femb/metadata.tsv", "00000/default/metadata.tsv"):
        assert (tmp_path / "ember" / f).read_bytes() == (tmp_path / "torch" / f).read_bytes(), f
    # the sprite: the same image (PNG bytes depend on how Pillow was asked to compress)
    from PIL import Image
    sprites = [Image.open(tmp_path / n / "00002/my%2femb/sprite.png") for n in ("ember", "torch")]
    assert sprites[0].mode == sprites[1].mode and np.array_equal(np.asarray(sprites[0]), np.asarray(sprites[1]))
    # projector configs are text protos: the same messages, whichever writer formatted them
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
    configs = [text_format.Parse((tmp_path / n / "projector_config.pbtxt").read_text(), ProjectorConfig())
               for n in ("ember", "torch")]
    assert configs[0] == configs[1]


def test_figure(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    import matplotlib
    matplotlib.use("Agg")

    def log(w, lib):
        fig = plt.figure(figsize=(2, 2), dpi=20)
        plt.plot([0, 1], [1, 0])
        w.add_figure("fig", fig, 0)
    mine, theirs = write_both(tmp_path, log)
    assert mine == theirs


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tensorboard_server_reads_scalars_and_graph(tmp_path):
    with etb.SummaryWriter(str(tmp_path)) as w:
        for step in range(4):
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
        w.add_graph(ember.nn.Sequential(ember.nn.Linear(4, 2), ember.nn.ReLU()), ember.ones(1, 4))
    port = _free_port()
    cmd = [sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path), "--port", str(port),
           "--host", "127.0.0.1", "--load_fast", "false"]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=.&tag=train%2Floss"
        deadline, data = time.time() + 60, None
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    data = json.loads(r.read())
                if data:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert data is not None, "tensorboard did not answer"
        assert [(step, value) for _, step, value in data] == [(s, np.float32(1.0 / (s + 1))) for s in range(4)]
        graph_url = f"http://127.0.0.1:{port}/data/plugin/graphs/graph?run=.&limit_attr_size=1024&large_attrs_key=_too_large_attrs"
        with urllib.request.urlopen(graph_url, timeout=10) as r:
            pbtxt = r.read().decode()
        assert 'name: "Sequential/Linear[0]/weight/weight"' in pbtxt and 'op: "aten::addmm"' in pbtxt
    finally:
        server.terminate()
        server.wait(10)


def test_record_writer_frames_as_tensorboards():
    import io

    from tensorboard.summary.writer.record_writer import RecordWriter

    mine, theirs = io.BytesIO(), io.BytesIO()
    for w in (etb.RecordWriter(mine), RecordWriter(theirs)):
        for data in (b"", b"event", bytes(range(256)) * 3):
            w.write(data)
        w.flush()
    assert mine.getvalue() == theirs.getvalue()


def _graph_model(L):
    nn = L.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            return self.norm(self.fc(x)).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Block(), Block()])
            self.head = nn.Sequential(nn.Linear(4, 2), nn.Tanh())

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.head(x)
    return Net()


def _read_graph(log_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(log_dir)
    acc.Reload()
    return acc.Graph()


def test_add_graph_shows_torchs_module_scopes(tmp_path):
    graphs = {}
    for name, lib, mod in (("ember", ember, etb), ("torch", torch, ttb)):
        with mod.SummaryWriter(str(tmp_path / name)) as w:
            w.add_graph(_graph_model(lib), lib.from_numpy(np.ones((3, 4), np.float32)))
        graphs[name] = _read_graph(str(tmp_path / name))
    mine, theirs = graphs["ember"], graphs["torch"]

    def scopes(g):
        return {n.name.rsplit("/", 1)[0] for n in g.node if n.op not in ("IO Node",)}
    assert scopes(mine) == scopes(theirs)  # Net/ModuleList[layers]/Block[0]/Linear[fc], ...
    names = {n.name for n in mine.node}
    for n in mine.node:
        assert all(i in names for i in n.input), n.name  # every edge ends at a node
    ops = {n.op for n in mine.node}
    assert {"IO Node", "prim::GetAttr", "aten::addmm", "aten::native_layer_norm", "aten::tanh"} <= ops
    (out,) = [n for n in mine.node if n.name.startswith("output/")]
    assert [d.size for d in out.attr["_output_shapes"].list.shape[0].dim] == [3, 2]
