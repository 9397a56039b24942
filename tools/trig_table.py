"""Print the constants of em_sinf/em_cosf in ember/_native/common.h (NOTE [ Vectorisable sin and cos ]).

em_2opi_chunks: for each float32 exponent e from -4 to 105 (|x| = m 2^e, m an integer of 24 bits, |x| >= 2^19;
inf and NaN use the last row), 4 doubles c0..c3 holding the 96 bits of 2/pi after those whose product with
m 2^e is a multiple of 4, 24 bits each, c_j = sum of b_i 2^(e - i) over i from e - 1 + 24 j to e + 22 + 24 j
(b_i the i-th bit of 2/pi after the binary point), so each m c_j is exact in double.
EM_PIO2_1..3: pi/2 as 33 + 33 bits + a double, for the Cody-Waite reduction below 2^19.
Run: python3 tools/trig_table.py  (needs mpmath); paste the output over the table in common.h.
"""

import mpmath

mpmath.mp.prec = 400
K = 300
B = int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** K))  # the bits of 2/pi, b_1 first, K of them


def chunk(e, j):
    a = e - 1 + 24 * j  # index of the chunk's first bit; bits at i <= 0 are 0 (2/pi < 1)
    v = (B >> (K - (a + 23))) & ((1 << 24) - 1)
    c = mpmath.mpf(v) * mpmath.mpf(2) ** (e - (a + 23))
    assert mpmath.mpf(float(c)) == c
    return float(c)


def top(v, bits):
    e = int(mpmath.floor(mpmath.log(abs(v), 2)))
    s = mpmath.mpf(2) ** (bits - 1 - e)
    return mpmath.floor(v * s) / s


pio2 = mpmath.pi / 2
p1 = top(pio2, 33)
p2 = top(pio2 - p1, 33)
lines = ["static const double em_2opi_chunks[440] = {"]
lines += ["    " + ", ".join(repr(chunk(e, j)) for j in range(4)) + "," for e in range(-4, 106)]
lines += ["};", f"#define EM_PIO2_1 {float(p1)!r}", f"#define EM_PIO2_2 {float(p2)!r}",
          f"#define EM_PIO2_3 {float(pio2 - p1 - p2)!r}"]
print("\n".join(lines))
