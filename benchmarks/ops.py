"""Op sweep: representative ops at 1e3 and 1e6 elements, ember vs torch in one process (forward, no grad).

Run: python benchmarks/ops.py [--quick]. One thread, interleaved rounds, medians; ratio = ember / torch.
"""

import sys

from _common import compare, ember, header, np, row, torch

QUICK = "--quick" in sys.argv


def _cases(n):
    side = int(round(n ** 0.5))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((side, side)).astype(np.float32)
    b = rng.standard_normal((side, side)).astype(np.float32)
    idx = rng.integers(0, side, side)
    mask = a > 0
    ea, eb, ei, em = (ember.from_numpy(x) for x in (a, b, idx, mask))
    ta, tb, ti, tm = (torch.from_numpy(x) for x in (a, b, idx, mask))

    def softmax(lib, x):
        e = (x - x.amax(1, keepdim=True)).exp()
        return e / e.sum(1, keepdim=True)

    return [
        ("add", lambda: ea + eb, lambda: ta + tb),
        ("mul", lambda: ea * eb, lambda: ta * tb),
        ("exp", lambda: ea.exp(), lambda: ta.exp()),
        ("sin", lambda: ea.sin(), lambda: ta.sin()),
        ("erf", lambda: ea.erf(), lambda: ta.erf()),
        ("erfc", lambda: ea.erfc(), lambda: ta.erfc()),
        ("gelu (exact, erf)", lambda: ember.nn.functional.gelu(ea), lambda: torch.nn.functional.gelu(ta)),
        ("sum", lambda: ea.sum(), lambda: ta.sum()),
        ("mean(1)", lambda: ea.mean(1), lambda: ta.mean(1)),
        ("max(dim=1)", lambda: ea.max(1), lambda: ta.max(1)),
        ("std(1)", lambda: ea.std(1), lambda: ta.std(1)),
        ("softmax composite", lambda: softmax(ember, ea), lambda: softmax(torch, ta)),
        ("matmul", lambda: ea @ eb, lambda: ta @ tb),
        ("cat(dim=0)", lambda: ember.cat([ea, eb]), lambda: torch.cat([ta, tb])),
        ("index_select", lambda: ea.index_select(0, ei), lambda: ta.index_select(0, ti)),
        ("gather", lambda: ea.gather(1, ei.reshape(-1, 1).expand(side, 4).contiguous()),
         lambda: ta.gather(1, ti.reshape(-1, 1).expand(side, 4).contiguous())),
        ("sort(1)", lambda: ea.sort(1), lambda: ta.sort(1)),
        ("topk(5)", lambda: ea.topk(min(5, side)), lambda: ta.topk(min(5, side))),
        ("cumsum(1)", lambda: ea.cumsum(1), lambda: ta.cumsum(1)),
        ("where", lambda: ember.where(em, ea, eb), lambda: torch.where(tm, ta, tb)),
        ("clamp", lambda: ea.clamp(-0.5, 0.5), lambda: ta.clamp(-0.5, 0.5)),
        ("flip(1)", lambda: ea.flip(1), lambda: ta.flip(1)),
    ]


def main():
    for n, number in ((1_000, 300), (1_000_000, 3)):
        header(f"ops at {n:.0e} elements (float32, forward, no grad), per call")
        with torch.no_grad(), ember.no_grad():
            for name, e, t in _cases(n):
                if QUICK and name not in ("add", "sum", "matmul", "sort(1)"):
                    continue
                es, ts = compare(e, t, number=number, rounds=5 if n > 1e4 else 7, warmup=2)
                row(f"{name}", es, ts)


if __name__ == "__main__":
    main()
