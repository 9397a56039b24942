"""Fused recurrent layers: one op runs a whole RNN / LSTM / GRU layer in one direction over a sequence.

`rnn_layer` is what nn.RNN, nn.LSTM and nn.GRU call once per layer and direction. Its kernel loops over
time steps in Python (the only loop), and each step's gates are one matmul of the hidden state with the
stacked `weight_hh`; the input projection of every step is one matmul with `weight_ih` made before the
loop. Its backward (`rnn_layer_backward`) is backpropagation through time written in NumPy: one matmul
per step for the hidden-state gradient, and the weight gradients as one matmul each over all steps.

NOTE [ Packed layout of a recurrent layer ]
The layer sees its input as packed rows: `x` is (N, input_size) with N = sum(batch_sizes), the rows of
time step t being `x[off[t]:off[t] + batch_sizes[t]]`, batch_sizes non-increasing (a padded (T, B, I)
input is the case batch_sizes = (B,) * T, a reshape). The hidden state is one (B, H) buffer updated in
place on its first batch_sizes[t] rows: in the forward direction rows past batch_sizes[t] hold the final
state of sequences that already ended, in the reverse direction they hold h0 of sequences that have not
started. So h_n is the buffer after the loop in both directions, and the backward walks the same steps
in the opposite order with the same slicing, leaving d h0 in its carry buffer.

NOTE [ Workspace output ]
The backward needs each step's gate activations and previous states. The kernel returns them as one
extra (N, K) output (like the reserve buffer of cuDNN's RNN), saved for the backward and never shown to
users: the module drops it.

NOTE [ Double backward of a fused layer ]
With create_graph=True the derivative is not computed by the NumPy BPTT (whose result would have no
history) but by rerunning the layer as a composite of ember ops and differentiating that with
create_graph, so gradients of gradients flow as for any composite.
"""

import numpy as np

from .._dispatch import NN, _modes, defop, dispatch
from .._meta import meta_array
from .._native import ops as _native
from .._native.blas import matmul as _blas_matmul  # NOTE [ BLAS threads by size ]
from ..autograd.grad_mode import state as _grad_state

__all__ = ["rnn_layer", "rnn_layer_backward", "run_layer", "MODES"]

MODES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _sigmoid(x, out=None):
    """1 / (1 + exp(-x)) as torch computes it (exp overflow to inf gives the exact 0)."""
    out = np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def _offsets(batch_sizes):
    off = [0]
    for b in batch_sizes:
        off.append(off[-1] + b)
    return off


def _order(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


# NOTE [ Rounding of a recurrent layer ]
# torch's CPU layer is not fused: each step is composed of ops (RNN.cpp's SimpleCell, LSTMCell, GRUCell), each
# of which rounds its result to the input dtype. The kernels below follow those ops one for one: the input
# projection x W_ih^T + b_ih of all steps is one addmm (`linear_ih`), then per step gh = h W_hh^T + b_hh is
# one addmm (`linear_hh`), the gates are gh.add_(gi) then sigmoid_/tanh_, and
#   LSTM  c = (f * c).add_(i * g),  h = o * c.tanh()  (then h W_hr^T, `matmul_hr`)
#   GRU   r, z = sigmoid(gh_rz + gi_rz),  n = tanh(gi_n + gh_n * r),  h = (h - n).mul_(z).add_(n)
# In float32/float64 every NumPy op rounds as torch's does. float16 and bfloat16 are computed in float32
# (torch computes each of these ops in float and rounds once: the addmm's products and bias, the sigmoid's
# exp and reciprocal) and `q` rounds each op's result to the half dtype in place where torch rounds.
# torch's `linear` is one addmm only for a contiguous input (or a 2-D one: packed data, the hidden state); a
# non-contiguous 3-D input (batch_first's transposed view, in the first layer) is `matmul` then `add_(bias)`,
# rounded twice: the layer's `split_bias` says so.


def _keep(a):
    return a


def _rounder(dt):
    def q(a):
        a[...] = a.astype(dt)
        return a
    return q


def _addmm(a, w_t, b, q, split=False):
    """a @ w_t + b (torch's linear / addmm), rounded once; `split`: rounded after the product too."""
    y = _blas_matmul(a, w_t)
    if b is not None:
        if split:
            q(y)
        y += b
    return q(y)


# ---- forward kernels, one per mode: they fill the workspace and the output rows ------------------------


def _fwd_simple(relu, xw, h, w_hh_t, b_hh, out, ws, off, bs, order, q):
    hprev = ws
    for t in order:
        s, b = off[t], bs[t]
        hp = h[:b]
        hprev[s:s + b] = hp
        pre = _addmm(hp, w_hh_t, b_hh, q)
        pre += xw[s:s + b]
        q(pre)
        new = np.maximum(pre, 0, out=pre) if relu else q(np.tanh(pre, out=pre))
        h[:b] = new
        out[s:s + b] = new
    return (h,)


def _fwd_lstm(xw, h, c, w_hh_t, b_hh, w_hr_t, out, ws, off, bs, order, q):
    H = c.shape[1]
    P = h.shape[1]
    layer = _native_lstm(H, w_hr_t, q, xw, h, c, out, ws)
    if layer is not None:  # NOTE [ Native LSTM layers ]
        w_hh = np.ascontiguousarray(w_hh_t.T, np.float32)
        bias = None if b_hh is None else np.ascontiguousarray(b_hh, np.float32)
        offs, sizes = np.array(off, np.int64), np.array(bs, np.int64)
        rc = layer[0](xw.ctypes.data, w_hh.ctypes.data, None if bias is None else bias.ctypes.data,
                      h.ctypes.data, c.ctypes.data, ws.ctypes.data, out.ctypes.data, offs.ctypes.data,
                      sizes.ctypes.data, len(bs), order.step < 0, h.shape[0], H, ws.shape[1],
                      _native.rnn_threads(bs[0] if len(bs) else 0, H, 4))
        if rc:
            raise MemoryError("ember: out of memory in an LSTM layer")
        return h, c
    gates, cs, tcs, cprev = ws[:, :4 * H], ws[:, 4 * H:5 * H], ws[:, 5 * H:6 * H], ws[:, 6 * H:7 * H]
    hprev = ws[:, 7 * H:7 * H + P]
    for t in order:
        s, b = off[t], bs[t]
        e = s + b
        hp = h[:b]
        hprev[s:e] = hp
        cprev[s:e] = c[:b]
        g = gates[s:e]
        np.add(_addmm(hp, w_hh_t, b_hh, q), xw[s:e], out=g)
        q(g)
        q(_sigmoid(g[:, :2 * H], out=g[:, :2 * H]))
        q(np.tanh(g[:, 2 * H:3 * H], out=g[:, 2 * H:3 * H]))
        q(_sigmoid(g[:, 3 * H:], out=g[:, 3 * H:]))
        cn = cs[s:e]
        q(np.multiply(g[:, H:2 * H], c[:b], out=cn))
        cn += q(g[:, :H] * g[:, 2 * H:3 * H])
        q(cn)
        c[:b] = cn
        tc = q(np.tanh(cn, out=tcs[s:e]))
        hn = q(g[:, 3 * H:] * tc)
        if w_hr_t is not None:
            ws[s:e, 7 * H + P:] = hn
            hn = _addmm(hn, w_hr_t, None, q)
        h[:b] = hn
        out[s:e] = hn
    return h, c


# NOTE [ Native LSTM layers ]
# In float32 without projection, a whole layer in one direction is one C call (ember/_native/rnn.c, NOTE
# [ One call per LSTM layer ]), its forward and its backward: every time step's recurrent product by the
# weight packed once per call, and everything an LSTM step does between two products (bias, gate
# activations, the cell and hidden updates, the workspace copies; backward the gate gradients and the cell
# gradient), on the kernels' threads with one barrier per step. The pointwise backward is products and sums
# in the NumPy code's order; the forward's sigmoid and tanh are the C kernels' (within an ulp of NumPy's, as
# torch's own oneDNN kernels are), and the recurrent products' sums are fused multiply-add chains (within
# the last bits of NumPy's BLAS). The arrays here are all C-contiguous: fresh matmul results (xw), the state
# copies, the workspace and output the layer allocates. The input projection before the loop and the weight
# gradients after it stay single large products (`_blas_matmul`).


def _native_lstm(H, w_hr, q, *arrays):
    """The native (forward, backward) of a layer of hidden size H over `arrays` (its row-major state,
    rows, workspace), or None."""
    if q is not _keep or w_hr is not None:
        return None
    for a in arrays:
        if a.dtype != np.float32 or not a.flags.c_contiguous:
            return None
    return _native.lstm_layer(arrays[0].shape[0], H)


def _fwd_gru(xw, h, w_hh_t, b_hh, out, ws, off, bs, order, q):
    H = h.shape[1]
    rz, n, ghn, hprev = ws[:, :2 * H], ws[:, 2 * H:3 * H], ws[:, 3 * H:4 * H], ws[:, 4 * H:5 * H]
    for t in order:
        s, b = off[t], bs[t]
        e = s + b
        hp = h[:b]
        hprev[s:e] = hp
        gh = _addmm(hp, w_hh_t, b_hh, q)
        gi = xw[s:e]
        q(np.add(gh[:, :2 * H], gi[:, :2 * H], out=rz[s:e]))
        q(_sigmoid(rz[s:e], out=rz[s:e]))
        ghn[s:e] = gh[:, 2 * H:]
        nn_ = q(np.multiply(gh[:, 2 * H:], rz[s:e, :H], out=n[s:e]))
        nn_ += gi[:, 2 * H:]
        q(nn_)
        q(np.tanh(nn_, out=nn_))
        hn = q(hp - nn_)
        hn *= rz[s:e, H:]
        q(hn)
        hn += nn_
        q(hn)
        h[:b] = hn
        out[s:e] = hn
    return (h,)


def _ws_width(mode, H, P, proj):
    return {"LSTM": 7 * H + P + (H if proj else 0), "GRU": 5 * H}.get(mode, P)


_HALF = frozenset({"float16", "bfloat16"})


@defop("rnn_layer", "RnnLayerBackward0", NN, saves="all", save_output=True)
def rnn_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes, split_bias=False):
    """One layer, one direction. Returns (output rows, h_n[, c_n], workspace); see the NOTEs above."""
    off = _offsets(batch_sizes)
    order = _order(len(batch_sizes), reverse)
    H = w_hh.shape[0] // MODES[mode]
    P = h0.shape[1]
    dt = x.dtype
    q = _keep
    if dt.name in _HALF:  # NOTE [ Rounding of a recurrent layer ]
        q = _rounder(dt)
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = (
            None if a is None else a.astype(np.float32) for a in (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr))
    xw = _addmm(x, w_ih.T, b_ih, q, split_bias)
    out = np.empty((x.shape[0], P), x.dtype)
    ws = np.empty((x.shape[0], _ws_width(mode, H, P, w_hr is not None)), x.dtype)
    h = np.array(h0, copy=True)
    with np.errstate(over="ignore"):
        if mode == "LSTM":
            states = _fwd_lstm(xw, h, np.array(c0, copy=True), w_hh.T, b_hh, None if w_hr is None else w_hr.T,
                               out, ws, off, batch_sizes, order, q)
        elif mode == "GRU":
            states = _fwd_gru(xw, h, w_hh.T, b_hh, out, ws, off, batch_sizes, order, q)
        else:
            states = _fwd_simple(mode == "RNN_RELU", xw, h, w_hh.T, b_hh, out, ws, off, batch_sizes, order, q)
    res = (out, *states, ws)
    return res if q is _keep else tuple(a.astype(dt) for a in res)


@rnn_layer.meta_
def _(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes, split_bias=False):
    H, P, dt = w_hh.shape[0] // MODES[mode], h0.shape[1], x._data.dtype
    states = (meta_array(tuple(h0.shape), dt),) + ((meta_array(tuple(c0.shape), dt),) if mode == "LSTM" else ())
    return (meta_array((x.shape[0], P), dt), *states,
            meta_array((x.shape[0], _ws_width(mode, H, P, w_hr is not None)), dt))


# ---- backward kernels (backpropagation through time) --------------------------------------------------


def _bwd_simple(relu, dout, dh, out, w_hh, off, bs, order):
    dpre_all = np.empty_like(out)
    fac = (out > 0).astype(out.dtype) if relu else 1 - out * out
    for t in order:
        s, b = off[t], bs[t]
        dpre = dpre_all[s:s + b]
        np.add(dh[:b], dout[s:s + b], out=dpre)
        dpre *= fac[s:s + b]
        dh[:b] = dpre @ w_hh
    return dpre_all, dpre_all


def _bwd_lstm(dout, dh, dc, ws, w_hh, w_hr, off, bs, order):
    H = dc.shape[1]
    gates, tcs, cprev = ws[:, :4 * H], ws[:, 5 * H:6 * H], ws[:, 6 * H:7 * H]
    dG = np.empty_like(gates)
    if dout.dtype == np.float32 and w_hr is None:
        dout = np.ascontiguousarray(dout)  # (an expanded gradient, from a sum, has zero strides)
    layer = _native_lstm(H, w_hr, _keep, ws, dout, dh, dc, dG)
    if layer is not None:  # NOTE [ Native LSTM layers ]
        w = np.ascontiguousarray(w_hh, np.float32)
        offs, sizes = np.array(off, np.int64), np.array(bs, np.int64)
        if layer[1](dh.ctypes.data, dc.ctypes.data, dout.ctypes.data, ws.ctypes.data, dG.ctypes.data, w.ctypes.data,
                    offs.ctypes.data, sizes.ctypes.data, len(bs), order.step < 0, dh.shape[0], H, ws.shape[1],
                    _native.rnn_threads(bs[0] if len(bs) else 0, H, 4)):
            raise MemoryError("ember: out of memory in an LSTM layer")
        return dG, dG, None
    dH = np.empty_like(dout) if w_hr is not None else None
    for t in order:
        s, b = off[t], bs[t]
        e = s + b
        dht = dh[:b] + dout[s:e]
        if w_hr is not None:
            dH[s:e] = dht
            dht = dht @ w_hr
        g = gates[s:e]
        i, f, gg, o = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
        tc = tcs[s:e]
        dct = dc[:b] + dht * o * (1 - tc * tc)
        d = dG[s:e]
        np.multiply(dct * gg, i * (1 - i), out=d[:, :H])
        np.multiply(dct * cprev[s:e], f * (1 - f), out=d[:, H:2 * H])
        np.multiply(dct * i, 1 - gg * gg, out=d[:, 2 * H:3 * H])
        np.multiply(dht * tc, o * (1 - o), out=d[:, 3 * H:])
        dc[:b] = dct * f
        dh[:b] = d @ w_hh
    return dG, dG, dH


def _bwd_gru(dout, dh, ws, w_hh, off, bs, order):
    H = dh.shape[1]
    rz, n_all, ghn, hprev = ws[:, :2 * H], ws[:, 2 * H:3 * H], ws[:, 3 * H:4 * H], ws[:, 4 * H:5 * H]
    dGi = np.empty((dout.shape[0], 3 * H), dout.dtype)
    dGh = np.empty_like(dGi)
    for t in order:
        s, b = off[t], bs[t]
        e = s + b
        dht = dh[:b] + dout[s:e]
        r, z, n = rz[s:e, :H], rz[s:e, H:], n_all[s:e]
        dn = np.multiply(dht * (1 - z), 1 - n * n, out=dGi[s:e, 2 * H:])
        np.multiply(dht * (hprev[s:e] - n), z * (1 - z), out=dGi[s:e, H:2 * H])
        np.multiply(dn * ghn[s:e], r * (1 - r), out=dGi[s:e, :H])
        dgh = dGh[s:e]
        dgh[:, :2 * H] = dGi[s:e, :2 * H]
        np.multiply(dn, r, out=dgh[:, 2 * H:])
        dh[:b] = dht * z + dgh @ w_hh
    return dGi, dGh


@defop("rnn_layer_backward", None, NN)
def rnn_layer_backward(dout, dh_n, dc_n, x, h0, w_ih, w_hh, w_hr, out, ws, mode, reverse, has_bias, batch_sizes):
    """Gradients of `rnn_layer`: (dx, dh0[, dc0], dw_ih, dw_hh[, db_ih, db_hh][, dw_hr])."""
    off = _offsets(batch_sizes)
    order = _order(len(batch_sizes), not reverse)
    dh = np.array(dh_n, copy=True)
    H = w_hh.shape[0] // MODES[mode]
    dH = dc = None
    if mode == "LSTM":
        dc = np.array(dc_n, copy=True)
        dGi, dGh, dH = _bwd_lstm(dout, dh, dc, ws, w_hh, w_hr, off, batch_sizes, order)
        hprev = ws[:, 7 * H:7 * H + h0.shape[1]]
    elif mode == "GRU":
        dGi, dGh = _bwd_gru(dout, dh, ws, w_hh, off, batch_sizes, order)
        hprev = ws[:, 4 * H:5 * H]
    else:
        dGi, dGh = _bwd_simple(mode == "RNN_RELU", dout, dh, out, w_hh, off, batch_sizes, order)
        hprev = ws
    # (the per-step products above are small and run on one BLAS thread: NOTE [ BLAS threads by size ])
    grads = [_blas_matmul(dGi, w_ih), dh] + ([dc] if dc is not None else []) \
        + [_blas_matmul(dGi.T, x), _blas_matmul(dGh.T, hprev)]
    if has_bias:
        db_ih = dGi.sum(0)
        grads += [db_ih, db_ih.copy() if dGh is dGi else dGh.sum(0)]  # (LSTM: one array, summed once)
    if w_hr is not None:
        grads.append(_blas_matmul(dH.T, ws[:, 7 * H + h0.shape[1]:]))
    return tuple(grads)


@rnn_layer_backward.meta_
def _(dout, dh_n, dc_n, x, h0, w_ih, w_hh, w_hr, out, ws, mode, reverse, has_bias, batch_sizes):
    like = [x, dh_n] + ([dc_n] if mode == "LSTM" else []) + [w_ih, w_hh]
    shapes = [tuple(t.shape) for t in like] + ([(w_ih.shape[0],), (w_hh.shape[0],)] if has_bias else []) + \
        ([tuple(w_hr.shape)] if w_hr is not None else [])
    return tuple(meta_array(s, dout._data.dtype) for s in shapes)


@rnn_layer.derivative_
def _(g, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes, split_bias=False, *, out):
    if _grad_state.enabled:  # create_graph: see NOTE [ Double backward of a fused layer ]
        return _composite_grads(g, (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr), mode, reverse, batch_sizes)
    lstm = mode == "LSTM"
    dc_n = g[2] if lstm else None
    res = list(dispatch(rnn_layer_backward, (g[0], g[1], dc_n, x, h0, w_ih, w_hh, w_hr, out[0], out[-1]),
                        (mode, reverse, b_ih is not None, batch_sizes)))
    dx, dh0 = res.pop(0), res.pop(0)
    dc0 = res.pop(0) if lstm else None
    dw_ih, dw_hh = res.pop(0), res.pop(0)
    db_ih, db_hh = (res.pop(0), res.pop(0)) if b_ih is not None else (None, None)
    dw_hr = res.pop(0) if w_hr is not None else None
    return dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh, dw_hr


# ---- the same math in ember ops: cells, and the composite layer used for double backward ---------------


def cell_math(mode, gi, gh, hx, cx=None):
    """One step from the two projections gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh (ember tensors)."""
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = f.sigmoid() * cx + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
    if mode == "GRU":
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = (ir + hr).sigmoid()
        z = (iz + hz).sigmoid()
        n = (in_ + r * hn).tanh()
        return (n + z * (hx - n),)
    pre = gi + gh
    return (pre.relu() if mode == "RNN_RELU" else pre.tanh(),)


def _linear(x, w, b):
    y = x.matmul(w.t())
    return y + b if b is not None else y


def composite_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes, linear=_linear):
    """`rnn_layer` written in ember ops (differentiable to any order); returns (output rows, h_n[, c_n]).
    `linear`: how a projection is computed (under autocast, `F.linear`, as torch's cells call it)."""
    from .shape import cat

    off = _offsets(batch_sizes)
    xw = linear(x, w_ih, b_ih)
    h, c = h0, c0
    outs = [None] * len(batch_sizes)
    for t in _order(len(batch_sizes), reverse):
        s, b = off[t], batch_sizes[t]
        hp = h[:b]
        new = cell_math(mode, xw[s:s + b], linear(hp, w_hh, b_hh), hp, None if c is None else c[:b])
        hn = new[0] if w_hr is None else new[0].matmul(w_hr.t())
        outs[t] = hn
        h = hn if b == h.shape[0] else cat([hn, h[b:]])
        if c is not None:
            c = new[1] if b == c.shape[0] else cat([new[1], c[b:]])
    return (cat(outs), h) + ((c,) if c is not None else ())


def _composite_grads(g, inputs, mode, reverse, batch_sizes):
    from ..autograd import grad
    from ..autograd.grad_mode import enable_grad

    want = [i for i, t in enumerate(inputs) if t is not None and t.requires_grad]
    with enable_grad():
        outs = composite_layer(*inputs, mode, reverse, batch_sizes)
    res = grad(outs, [inputs[i] for i in want], g[:len(outs)], create_graph=True, allow_unused=True)
    grads = [None] * len(inputs)
    for i, r in zip(want, res):
        grads[i] = r
    return tuple(grads)


# ---- the entry the modules call -------------------------------------------------------------------------


def run_layer(mode, x, h0, c0, weights, reverse, batch_sizes, split_bias=False):
    """Run one layer in one direction; weights = (w_ih, w_hh, b_ih, b_hh, w_hr) with None where absent;
    `split_bias`: the rows come from a non-contiguous (T, B, I) input (NOTE [ Rounding of a recurrent layer ]).

    Returns (output rows, h_n, c_n or None), dropping the workspace (NOTE [ Workspace output ]).
    """
    if _modes:  # NOTE [ Recurrent layers under autocast ]
        from ..amp.autocast_mode import autocasting

        if autocasting() and (mode != "LSTM" or weights[4] is not None):
            return _autocast_layer(mode, x, h0, c0, weights, reverse, batch_sizes, split_bias)
    res = dispatch(rnn_layer, (x, h0, c0, *weights), (mode, reverse, tuple(batch_sizes), split_bias))
    return res[0], res[1], (res[2] if mode == "LSTM" else None)


# NOTE [ Recurrent layers under autocast ]
# torch's CPU LSTM without projections runs each layer as one oneDNN op, `mkldnn_rnn_layer`, which autocast
# lists: everything is cast to the lower precision (ember: `rnn_layer` by the autocast table). Its other
# layers (RNN_TANH/RELU, GRU, LSTM with projections) are composites of `linear` (listed: gates in the lower
# precision) and pointwise ops that mix those gates with the float32 state, so a GRU's state and output
# stay float32 and an LSTM's cell state is float32 while its projected output is in the lower precision.
# Under autocast ember runs those layers as `composite_layer` with `F.linear`, the same op sequence, which
# gives torch's dtypes and its roundings. oneDNN has no float16 LSTM on CPUs without AVX512-FP16 or
# AMX-FP16: torch fails there, and so does ember.
_ONEDNN_LSTM_FP16 = ("could not create a primitive descriptor for the LSTM forward propagation primitive. Run "
                     "workload with environment variable ONEDNN_VERBOSE=all to get additional diagnostic "
                     "information.")


def _autocast_layer(mode, x, h0, c0, weights, reverse, batch_sizes, split_bias):
    from ..amp.autocast_mode import autocast_call
    from ..nn.functional import linear

    def projections(a, w, b):
        if split_bias and a is x:  # torch's linear of the transposed input: matmul, then add_(bias)
            return autocast_call("linear", _linear, a, w, b)
        return linear(a, w, b)
    out = composite_layer(x, h0, c0, *weights, mode, reverse, list(batch_sizes), linear=projections)
    return out[0], out[1], (out[2] if mode == "LSTM" else None)


def check_onednn_lstm(dtype):
    """Raise what torch raises for an LSTM layer oneDNN cannot run in `dtype` on this CPU."""
    from .. import cpu, float16

    if dtype is float16:
        caps = cpu.get_capabilities()
        if not (caps.get("avx512_fp16") or caps.get("amx_fp16")):
            raise RuntimeError(_ONEDNN_LSTM_FP16)
