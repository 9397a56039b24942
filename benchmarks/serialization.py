"""ember.save / ember.load vs torch.save / torch.load on a model-sized state_dict (one thread, one process).

Run: python benchmarks/serialization.py. Prints medians and ember/torch ratios, rounds interleaved A B B A.
"""

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"

import collections  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

torch.set_num_threads(1)


def state_dict(lib, n_layers, width):
    rng = np.random.default_rng(0)
    sd = collections.OrderedDict()
    for i in range(n_layers):
        sd[f"layer{i}.weight"] = lib.from_numpy(rng.standard_normal((width, width)).astype(np.float32))
        sd[f"layer{i}.bias"] = lib.from_numpy(rng.standard_normal(width).astype(np.float32))
        sd[f"layer{i}.bn.num_batches_tracked"] = lib.tensor(3)
    return sd


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def compare(name, ember_fn, torch_fn, rounds=5, reps=3):
    e, t = [], []
    ember_fn(), torch_fn()  # warm up
    for _ in range(rounds):  # A B B A
        e += timed(ember_fn, reps)
        t += timed(torch_fn, reps)
        t += timed(torch_fn, reps)
        e += timed(ember_fn, reps)
    me, mt = statistics.median(e), statistics.median(t)
    print(f"{name:42s} ember {me * 1e3:9.2f} ms   torch {mt * 1e3:9.2f} ms   ratio {me / mt:5.2f}")


def main():
    tmp = tempfile.mkdtemp()
    for n_layers, width in ((200, 16), (20, 512)):
        sd_e, sd_t = state_dict(ember, n_layers, width), state_dict(torch, n_layers, width)
        mb = sum(v.numel() * v.element_size() for v in sd_t.values()) / 2 ** 20
        tag = f"{3 * n_layers} tensors, {mb:.1f} MB"

        def esave(sd=sd_e):
            ember.save(sd, io.BytesIO())

        def tsave(sd=sd_t):
            torch.save(sd, io.BytesIO())

        compare(f"save to buffer ({tag})", esave, tsave)
        pe, pt = os.path.join(tmp, "e.pt"), os.path.join(tmp, "t.pt")
        compare(f"save to file ({tag})", lambda: ember.save(sd_e, pe), lambda: torch.save(sd_t, pt))
        compare(f"load from file ({tag})", lambda: ember.load(pe), lambda: torch.load(pt))
        compare(f"load mmap=True ({tag})", lambda: ember.load(pe, mmap=True), lambda: torch.load(pt, mmap=True))


if __name__ == "__main__":
    main()
