"""One rank of the DDP test job (tests/distributed/test_ddp.py starts two).

Every check runs the same thing in ember (over ember.distributed) and in torch (its own DDP over a gloo
group of the same ranks) from the same NumPy data, and records what to compare; rank r writes its records
to `<out>/rank<r>.json`, which the test reads. Checks: DDP training against single-process training on the
full batch and against torch's DDP (default, gradient_as_bucket_view, many small buckets,
find_unused_parameters, static_graph, buffers, no_sync), comm hooks (allreduce, fp16, PowerSGD of rank 1
and 2, top-k and quantization as user hooks), torch's errors, SyncBatchNorm against BatchNorm on the full
batch, ZeroRedundancyOptimizer against the plain optimizer, join() with uneven inputs, allreduce launched
during backward, rank-0 checkpoint with barrier, torch.distributed.checkpoint save/load of get_state_dict.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

import ember

OUT = sys.argv[1]
RESULTS = []


def record(name, ember_value, torch_value, tol=0.0):
    """Compare a list of arrays (relative to the largest magnitude, at least 1) or a string with torch's."""
    if isinstance(ember_value, str) or isinstance(torch_value, str):
        RESULTS.append({"name": name, "ember": ember_value, "torch": torch_value})
        return
    diff = max([float(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).max()
                      / max(1.0, float(np.abs(np.asarray(b, dtype=np.float64)).max())))
                for a, b in zip(ember_value, torch_value)] + [0.0])
    same_len = len(ember_value) == len(torch_value)
    RESULTS.append({"name": name, "diff": diff if same_len else float("inf"), "tol": tol})


def error_of(fn):
    try:
        fn()
    except Exception as e:  # the class and message are what is compared
        return f"{type(e).__name__}: {e}"
    return "no error"


edist = ember.distributed
tdist = torch.distributed
edist.init_process_group("gloo")
RANK, WS = edist.get_rank(), edist.get_world_size()
os.environ.pop("TORCHELASTIC_USE_AGENT_STORE", None)  # (torch's own group hosts its own store)
tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['Q_TORCH_PORT']}", rank=RANK,
                         world_size=WS)
torch.set_num_threads(1)

rng = np.random.default_rng(0)
PER = 3                                    # samples per rank
W = [rng.standard_normal(s) for s in [(16, 8), (16,), (4, 16), (4,)]]
X = rng.standard_normal((6, PER * WS, 8))
Y = rng.standard_normal((6, PER * WS, 4))


class Net:
    """The model of both libraries: Linear-Tanh-Linear, plus an optional branch (unused when asked)."""

    @staticmethod
    def make(lib, branch=False, bn=False):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.l1 = lib.nn.Linear(8, 16, dtype=lib.float64)
                self.bn = lib.nn.BatchNorm1d(16, dtype=lib.float64) if bn else None
                self.l2 = lib.nn.Linear(16, 4, dtype=lib.float64)
                self.extra = lib.nn.Linear(8, 4, dtype=lib.float64) if branch else None
                self.use_extra = False

            def forward(self, x):
                h = self.l1(x)
                if self.bn is not None:
                    h = self.bn(h)
                y = self.l2(lib.tanh(h))
                return y + self.extra(x) if self.use_extra else y

        m = M()
        with lib.no_grad():
            for p, w in zip([m.l1.weight, m.l1.bias, m.l2.weight, m.l2.bias], W):
                p.copy_(lib.tensor(w + RANK))      # ranks start apart: DDP broadcasts rank 0's
            if branch:
                m.extra.weight.fill_(0.1 + RANK)
                m.extra.bias.fill_(0.2)
        return m


def lib_ddp(lib):
    return lib.nn.parallel.DistributedDataParallel


def train(lib, ddp_kwargs=None, steps=4, hook=None, dist=True, branch=False, bn=False, nosync=0, opt="sgd",
          use_extra=lambda s: False):
    """Weights after `steps` SGD steps on the MSE loss; dist=False: one process on the full batch."""
    m = Net.make(lib, branch, bn)
    if not dist:
        with lib.no_grad():                      # the single-process run starts from rank 0's weights
            for p, w in zip([m.l1.weight, m.l1.bias, m.l2.weight, m.l2.bias], W):
                p.copy_(lib.tensor(w))
            if branch:
                m.extra.weight.fill_(0.1)
    model = lib_ddp(lib)(m, **(ddp_kwargs or {})) if dist else m
    if hook is not None:
        model.register_comm_hook(*hook(lib))
    optim = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if opt == "sgd" else opt(lib, model)
    lo, hi = (RANK * PER, (RANK + 1) * PER) if dist else (0, PER * WS)
    for s in range(steps):
        m.use_extra = use_extra(s)
        optim.zero_grad()
        for _k in range(nosync):                # micro-batches accumulated locally under no_sync
            with model.no_sync():
                ((model(lib.tensor(X[s - 1][lo:hi])) - lib.tensor(Y[s - 1][lo:hi])) ** 2).sum().backward()
        out = model(lib.tensor(X[s][lo:hi]))
        loss = ((out - lib.tensor(Y[s][lo:hi])) ** 2).sum()
        (loss if dist else loss / WS).backward()  # (DDP averages the ranks' gradients)
        optim.step()
    bufs = [b.detach().numpy().copy() for b in m.buffers() if b.dtype == lib.float64]
    return [p.detach().numpy().copy() for p in m.parameters()] + bufs


def mods(lib):
    from importlib import import_module

    base = lib.__name__ + ".distributed.algorithms.ddp_comm_hooks."
    return import_module(base + "default_hooks"), import_module(base + "powerSGD_hook")


# ---- DDP training: ember vs the full batch, ember vs torch -------------------------------------------------

full = train(ember, dist=False)
for name, kw in [("default", {}), ("gradient_as_bucket_view", {"gradient_as_bucket_view": True}),
                 ("small buckets", {"bucket_cap_mb": 0.0005}), ("find_unused_parameters",
                 {"find_unused_parameters": True}), ("static_graph", {"static_graph": True})]:
    e = train(ember, kw)
    record(f"ddp {name} == full batch", e, full, 1e-13)
    record(f"ddp {name} == torch ddp", e, train(torch, kw), 1e-13)
record("ddp no_sync == torch ddp", train(ember, nosync=1), train(torch, nosync=1), 1e-13)
record("ddp buffers (BatchNorm) == torch ddp", train(ember, bn=True), train(torch, bn=True), 1e-13)


def buffer_spread(lib, d, kw):
    """The BatchNorm's running stats (the last arrays of `train`) on this rank minus those on the other: 0
    when DDP broadcasts buffers, the ranks' own statistics without (`broadcast_buffers=False`)."""
    bufs = train(lib, kw, bn=True)[-2:]
    both = [None] * WS
    d.all_gather_object(both, bufs)
    return [b - o for b, o in zip(bufs, both[1 - RANK])]


for flag in (False, True):
    kw = {"broadcast_buffers": flag}
    record(f"ddp broadcast_buffers={flag}: running stats minus the other rank's == torch ddp",
           buffer_spread(ember, edist, kw), buffer_spread(torch, tdist, kw), 1e-13)
some_steps = dict(branch=True, use_extra=lambda s: s % 2 == 1)
record("ddp find_unused, branch used every other step == torch",
       train(ember, {"find_unused_parameters": True}, **some_steps),
       train(torch, {"find_unused_parameters": True}, **some_steps), 1e-13)
record("ddp unused parameter, find_unused == full batch",
       train(ember, {"find_unused_parameters": True}, branch=True)[:4], full[:4], 1e-13)

# ---- communication hooks ---------------------------------------------------------------------------------


def topk_hook(lib):
    def hook(state, bucket: lib.distributed.GradBucket):  # seed 000's top-k sparsification, then average
        buf = bucket.buffer()
        k = max(1, buf.numel() // 4)
        _, idx = buf.abs().topk(k)
        sparse = lib.zeros_like(buf)
        sparse[idx] = buf[idx]
        fut = lib.distributed.all_reduce(sparse, async_op=True).get_future()
        return fut.then(lambda f: f.value()[0] / lib.distributed.get_world_size())
    return None, hook


def quant_hook(lib):
    def hook(state, bucket):                     # seed 000's 8-bit quantization, then average
        buf = bucket.buffer()
        scale = 127 / buf.abs().max()
        q = lib.clamp(lib.round(buf * scale), -128, 127) / scale
        fut = lib.distributed.all_reduce(q, async_op=True).get_future()
        return fut.then(lambda f: f.value()[0] / lib.distributed.get_world_size())
    return None, hook


def psgd(rank, **kw):
    def make(lib):
        mod = mods(lib)[1]
        return mod.PowerSGDState(None, matrix_approximation_rank=rank, start_powerSGD_iter=2,
                                 min_compression_rate=0.5, **kw), mod.powerSGD_hook
    return make


hooks = [("allreduce_hook", lambda lib: (None, mods(lib)[0].allreduce_hook), 1e-13),
         ("fp16_compress_hook", lambda lib: (None, mods(lib)[0].fp16_compress_hook), 1e-13),
         ("powerSGD rank 1", psgd(1), 1e-13), ("powerSGD rank 2, no warm start", psgd(2, warm_start=False), 1e-13),
         ("powerSGD rank 2, batched", psgd(2, batch_tensors_with_same_shape=True), 1e-13),
         ("top-k user hook", topk_hook, 1e-13), ("quantization user hook", quant_hook, 1e-13)]
for name, hook, tol in hooks:
    record(f"hook {name} == torch", train(ember, hook=hook, steps=5), train(torch, hook=hook, steps=5), tol)
record("hook allreduce_hook == no hook", train(ember, hook=hooks[0][1]), train(ember), 1e-13)


def register_twice(lib):
    model = lib_ddp(lib)(Net.make(lib))
    model.register_comm_hook(None, mods(lib)[0].allreduce_hook)
    model.register_comm_hook(None, mods(lib)[0].allreduce_hook)


record("error: register_comm_hook twice", error_of(lambda: register_twice(ember)),
       error_of(lambda: register_twice(torch)))
record("error: bf16 hook without CUDA",
       error_of(lambda: lib_ddp(ember)(Net.make(ember)).register_comm_hook(None, mods(ember)[0].bf16_compress_hook)),
       error_of(lambda: lib_ddp(torch)(Net.make(torch)).register_comm_hook(None, mods(torch)[0].bf16_compress_hook)))
record("error: module without trainable parameters",
       error_of(lambda: lib_ddp(ember)(ember.nn.Linear(2, 2).requires_grad_(False))),
       error_of(lambda: lib_ddp(torch)(torch.nn.Linear(2, 2).requires_grad_(False))))


def unused_without_flag(lib):
    model = lib_ddp(lib)(Net.make(lib, branch=True))
    for _ in range(2):
        model(lib.tensor(X[0][:PER])).sum().backward()


record("error: unused parameter without find_unused_parameters", error_of(lambda: unused_without_flag(ember)),
       error_of(lambda: unused_without_flag(torch)))
record("state_dict keys", " ".join(lib_ddp(ember)(Net.make(ember, bn=True)).state_dict()),
       " ".join(lib_ddp(torch)(Net.make(torch, bn=True)).state_dict()))
record("repr", repr(lib_ddp(ember)(ember.nn.Linear(2, 3))), repr(lib_ddp(torch)(torch.nn.Linear(2, 3))))

# ---- SyncBatchNorm: statistics over both ranks == BatchNorm over the full batch ----------------------------

xs = rng.standard_normal((2, PER * WS, 3, 4, 5))
gs = rng.standard_normal((PER * WS, 3, 4, 5))
esbn = ember.nn.SyncBatchNorm(3, momentum=0.3, dtype=ember.float64)
tbn = torch.nn.BatchNorm2d(3, momentum=0.3, dtype=torch.float64)
for mod, lib in [(esbn, ember), (tbn, torch)]:
    with lib.no_grad():
        mod.weight.copy_(lib.tensor(W[1][:3]))
        mod.bias.copy_(lib.tensor(W[3][:3]))
sl = slice(RANK * PER, (RANK + 1) * PER)
for step in range(2):
    xe = ember.tensor(xs[step][sl], requires_grad=True)
    xt = torch.tensor(xs[step], requires_grad=True)
    ye, yt = esbn(xe), tbn(xt)
    (ye * ember.tensor(gs[sl])).sum().backward()
    (yt * torch.tensor(gs)).sum().backward()
    record(f"SyncBatchNorm step {step} output == BatchNorm on the full batch", [ye.detach().numpy()],
           [yt.detach().numpy()[sl]], 1e-13)
    record(f"SyncBatchNorm step {step} input grad", [xe.grad.numpy()], [xt.grad.numpy()[sl]], 1e-13)
wg = ember.stack([esbn.weight.grad, esbn.bias.grad])
edist.all_reduce(wg)
record("SyncBatchNorm weight/bias grads summed over ranks", [wg.numpy()],
       [np.stack([tbn.weight.grad.numpy(), tbn.bias.grad.numpy()])], 1e-13)
record("SyncBatchNorm running stats", [esbn.running_mean.numpy(), esbn.running_var.numpy()],
       [tbn.running_mean.numpy(), tbn.running_var.numpy()], 1e-13)
conv = ember.nn.SyncBatchNorm.convert_sync_batchnorm(Net.make(ember, bn=True))
record("convert_sync_batchnorm type", type(conv.bn).__name__, "SyncBatchNorm")

# ---- ZeroRedundancyOptimizer == the plain optimizer -------------------------------------------------------


def zero(cls_name, bucket=False):
    def make(lib, model):
        z = lib.distributed.optim.ZeroRedundancyOptimizer
        kw = {"lr": 0.01, "momentum": 0.9} if cls_name == "SGD" else {"lr": 0.01}
        return z(model.parameters(), getattr(lib.optim, cls_name), parameters_as_bucket_view=bucket, **kw)
    return make


import torch.distributed.optim  # noqa: E402,F401

import ember.distributed.optim  # noqa: E402,F401  (the submodules, as a script imports them)

for cls_name in ["SGD", "Adam"]:
    plain = train(ember, opt=lambda lib, m, c=cls_name: getattr(lib.optim, c)(
        m.parameters(), **({"lr": 0.01, "momentum": 0.9} if c == "SGD" else {"lr": 0.01})))
    record(f"ZeRO {cls_name} == plain {cls_name}", train(ember, opt=zero(cls_name)), plain, 0.0)
    record(f"ZeRO {cls_name} bucket view == plain", train(ember, opt=zero(cls_name, True)), plain, 0.0)
    record(f"ZeRO {cls_name} == torch ZeRO", train(ember, opt=zero(cls_name)), train(torch, opt=zero(cls_name)), 1e-13)

holder = {}


def zero_state(lib):
    m = lib_ddp(lib)(Net.make(lib))
    opt = zero("Adam")(lib, m)
    m(lib.tensor(X[0][:PER])).sum().backward()
    opt.step()
    opt.consolidate_state_dict(to=0)
    holder[lib.__name__] = opt
    if RANK != 0:
        return [], error_of(opt.state_dict)
    sd = opt.state_dict()
    return [v.detach().numpy() for k in sorted(sd["state"]) for v in sd["state"][k].values()], \
        repr(sorted((g["lr"], g["params"]) for g in sd["param_groups"]))


(ea, eg), (ta, tg) = zero_state(ember), zero_state(torch)
record("ZeRO consolidated state_dict == torch's", ea, ta, 1e-13)
record("ZeRO state_dict groups / error off the consolidating rank", eg, tg)

# ---- join(): uneven inputs -------------------------------------------------------------------------------


def uneven(lib, divide_by_initial):
    m = Net.make(lib)
    model = lib_ddp(lib)(m)
    optim = lib.optim.SGD(model.parameters(), lr=0.1)
    with model.join(divide_by_initial_world_size=divide_by_initial):
        for s in range(3 + RANK):              # rank 1 has one more batch
            optim.zero_grad()
            model(lib.tensor(X[s][:PER] + RANK)).sum().backward()
            optim.step()
    return [p.detach().numpy() for p in m.parameters()]


for div in (True, False):
    record(f"join uneven inputs divide_by_initial_world_size={div} == torch", uneven(ember, div),
           uneven(torch, div), 1e-13)

# ---- allreduce launched during backward ------------------------------------------------------------------

events = []
model = lib_ddp(ember)(Net.make(ember), bucket_cap_mb=0.0005)
model(ember.tensor(X[0][:PER])).sum().backward()  # first iteration: buckets rebuilt in gradient order
red = model.reducer
launch = red._launch
red._launch = lambda b: (events.append(("launch", b)), launch(b))
for p in model.parameters():
    p.register_post_accumulate_grad_hook(lambda p: events.append(("grad", None)))
model(ember.tensor(X[1][:PER])).sum().backward()
first_launch = next(i for i, e in enumerate(events) if e[0] == "launch")
last_grad = max(i for i, e in enumerate(events) if e[0] == "grad")
RESULTS.append({"name": "first bucket launched before the last gradient", "ember": first_launch < last_grad,
                "torch": True})
RESULTS.append({"name": "buckets after rebuild", "ember": len(red.buckets) > 1, "torch": True})

# ---- checkpoint: rank 0 saves, barrier, every rank loads --------------------------------------------------

path = os.path.join(tempfile.gettempdir(), f"q_ddp_ckpt_{os.environ['Q_TORCH_PORT']}.pt")
model = lib_ddp(ember)(Net.make(ember))
if RANK == 0:
    ember.save(model.module.state_dict(), path)
edist.barrier()
sd = ember.load(path)
record("rank-0 checkpoint loaded on every rank == rank 0's weights", [v.numpy() for v in sd.values()],
       [v.detach().numpy() for v in Net.make(ember).state_dict().values()] if RANK == 0 else
       [w for w in W], 0.0)
edist.barrier()
if RANK == 0:
    os.remove(path)

# ---- torch.distributed.checkpoint: save / load of get_state_dict, resumed == uninterrupted -----------------

import torch.distributed.checkpoint as tdcp  # noqa: E402

import ember.distributed.checkpoint as edcp  # noqa: E402
from ember.distributed.checkpoint.state_dict import get_state_dict, set_state_dict  # noqa: E402


def resumed(lib, dcp, get_sd, set_sd, ckpt):
    """Train 2 steps, checkpoint, train 2 more in a fresh model restored from it; the weights after."""
    def fresh():
        model = lib_ddp(lib)(Net.make(lib))
        return model, lib.optim.Adam(model.parameters(), lr=0.01)

    def steps(model, opt, rng_steps):
        for s in rng_steps:
            opt.zero_grad()
            ((model(lib.tensor(X[s][RANK * PER:(RANK + 1) * PER])) - lib.tensor(Y[s][RANK * PER:(RANK + 1) * PER]))
             ** 2).sum().backward()
            opt.step()

    model, opt = fresh()
    steps(model, opt, range(2))
    msd, osd = get_sd(model, opt)
    dcp.save({"model": msd, "optim": osd, "epoch": 2}, checkpoint_id=ckpt)
    model2, opt2 = fresh()
    model2(lib.tensor(X[0][:PER])).sum().backward()  # (Adam's state must exist to be loaded into)
    opt2.step()
    opt2.zero_grad()
    msd2, osd2 = get_sd(model2, opt2)
    state = {"model": msd2, "optim": osd2, "epoch": 0}
    dcp.load(state, checkpoint_id=ckpt)
    set_sd(model2, opt2, model_state_dict=state["model"], optim_state_dict=state["optim"])
    steps(model2, opt2, range(2, 4))
    steps(model, opt, range(2, 4))
    return ([p.detach().numpy() for p in model2.parameters()], state["epoch"],
            [p.detach().numpy() for p in model.parameters()])


box = [tempfile.mkdtemp() if RANK == 0 else None]
edist.broadcast_object_list(box, src=0)
from torch.distributed.checkpoint.state_dict import get_state_dict as tget  # noqa: E402
from torch.distributed.checkpoint.state_dict import set_state_dict as tset  # noqa: E402

(ew, ee, eu) = resumed(ember, edcp, get_state_dict, set_state_dict, os.path.join(box[0], "e"))
(tw, te, _) = resumed(torch, tdcp, tget, tset, os.path.join(box[0], "t"))
record("dcp save/load of get_state_dict, resumed training == uninterrupted", ew, eu, 0.0)
record("dcp save/load of get_state_dict, resumed training == torch", ew, tw, 1e-13)
record("dcp non-tensor value restored", str(ee), str(te))
record("dcp files", " ".join(sorted(os.listdir(os.path.join(box[0], "e")))),
       " ".join(sorted(os.listdir(os.path.join(box[0], "t")))))

edist.barrier()
if RANK == 0:
    shutil.rmtree(box[0])

with open(os.path.join(OUT, f"rank{RANK}.json"), "w") as f:
    json.dump(RESULTS, f)
tdist.destroy_process_group()
edist.destroy_process_group()
