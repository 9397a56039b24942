"""Samplers and sorting at 1e6 elements, ember vs torch (one thread, interleaved rounds, medians).

The float64 samplers take the C library's transcendental functions, as torch does (through NumPy's scalar
loop, See NOTE [ The C library's scalar loop through NumPy ]), so their numbers are torch's on every CPU;
sort with ties replays torch's std::sort order, one vectorised pass per introsort level (See NOTE [ torch's
unstable sort order ]).
"""

from _common import compare, ember, header, np, row, torch

N = 1_000_000


def main():
    header(f"random and sort, {N:,} elements")
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    ties = np.random.default_rng(0).integers(0, 1000, N).astype(np.float32)
    ones_t, ones_e = torch.ones(1000, 1000).t(), ember.ones(1000, 1000).t()
    cases = [
        ("rand float32", lambda m: m.rand(N)),
        ("randn float32", lambda m: m.randn(N)),
        ("randn float64", lambda m: m.randn(N, dtype=m.float64)),
        ("exponential_ float32", lambda m: m.empty(N).exponential_()),
        ("dropout p=0.5 (transposed input)", lambda m: m.nn.functional.dropout(
            ones_t if m is torch else ones_e, 0.5)),
        ("sort float32, no ties", lambda m: m.sort(m.from_numpy(x))),
        ("sort float32, 1000 distinct values", lambda m: m.sort(m.from_numpy(ties))),
    ]
    for name, f in cases:
        e, t = compare(lambda: f(ember), lambda: f(torch), number=3, rounds=5, warmup=1)
        row(name, e, t, "ms", 1e3)


if __name__ == "__main__":
    main()
