"""Recurrent layers: nn.RNN, nn.LSTM, nn.GRU and their single-step cells (torch.nn.modules.rnn).

Parameters are named and shaped as torch's (`weight_ih_l0`, `weight_hh_l0_reverse`, `bias_ih_l1`,
`weight_hr_l0` for LSTM projections), gates stacked in torch's order (LSTM: i, f, g, o; GRU: r, z, n), so
state_dicts move between ember and torch. Each layer and direction is one fused op (`rnn_layer` in
ember/_ops/rnn.py: one matmul per time step, backpropagation through time in NumPy); padded input is the
packed case with equal batch sizes (NOTE [ Packed layout of a recurrent layer ]). The cells are written in
ember ops.
"""

import math
import numbers
import warnings

from ..._ops import rnn as _R
from ..._ops.creation import zeros
from ..._ops.shape import cat, stack
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    for name, v, typ in (("bias", bias, bool), ("batch_first", batch_first, bool), ("input_size", input_size, int),
                         ("hidden_size", hidden_size, int)):
        if not isinstance(v, typ):
            raise TypeError(f"{name} should be of type {typ.__name__}, got: {type(v).__name__}")
        if typ is int and v <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    r"""Base class for RNN modules (RNN, LSTM, GRU): parameters, checks, and the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if mode not in _R.MODES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _R.MODES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_input = input_size if layer == 0 else real_hidden * (2 if bidirectional else 1)
                shapes = {"weight_ih_l{}{}": (gate_size, layer_input), "weight_hh_l{}{}": (gate_size, real_hidden)}
                if bias:
                    shapes.update({"bias_ih_l{}{}": (gate_size,), "bias_hh_l{}{}": (gate_size,)})
                if proj_size > 0:
                    shapes["weight_hr_l{}{}"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in shapes.items():
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(_empty(shape, dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self):
        """A no-op, as in torch on the CPU (it matters only for cuDNN)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if "proj_size" not in state:
            self.proj_size = 0

    # ---- checks, with torch's messages --------------------------------------------------------------------

    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # ---- running the layers ------------------------------------------------------------------------------

    def _zeros(self, input, batch, size):
        return zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size, dtype=input.dtype,
                     device=input.device)

    def _run(self, x, batch_sizes, hx, cx, split_bias=False):
        """x: packed rows (N, input_size); hx/cx: (layers*dirs, B, *). Returns (rows, h_n, c_n or None).
        `split_bias`: x comes from a non-contiguous (T, B, I) input (NOTE [ Rounding of a recurrent layer ])."""
        dirs = 2 if self.bidirectional else 1
        names = self._all_weights
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                ws = [getattr(self, n) for n in names[k]]
                w = ws[:2] + (ws[2:4] if self.bias else [None, None]) + ([ws[-1]] if self.proj_size else [None])
                out, h, c = _R.run_layer(self.mode, x, hx[k], None if cx is None else cx[k], w, d == 1,
                                         batch_sizes, split_bias and layer == 0)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if dirs == 1 else cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                from ..functional import dropout

                x = dropout(x, self.dropout, True)
        return x, stack(h_n), (stack(c_n) if cx is not None else None)

    def _forward(self, input, hx, name):
        """The shared body of RNN / LSTM / GRU forward; hx is a Tensor or (h, c) for LSTM."""
        lstm = self.mode == "LSTM"
        orig = input
        is_batched = True
        sorted_indices = unsorted_indices = None
        if isinstance(orig, PackedSequence):
            input, batch_sizes_t, sorted_indices, unsorted_indices = orig
            batch_sizes = batch_sizes_t.tolist()
            mini_batch = batch_sizes[0]
        else:
            batch_sizes_t = batch_sizes = None
            if input.dim() not in (2, 3):
                got = f"{input.dim()}D tensor" if self.mode.startswith("RNN") else f"{input.dim()}D"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {got} instead")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        hx = self._initial_state(input, hx, is_batched, mini_batch, batch_sizes_t, sorted_indices)
        h0, c0 = hx if lstm else (hx, None)
        if batch_sizes is None:
            x = input.transpose(0, 1) if self.batch_first else input
            T, B = x.shape[0], x.shape[1]
            rows, h_n, c_n = self._run(x.reshape(T * B, x.shape[2]), [B] * T, h0, c0, not x.is_contiguous())
            output = rows.view(T, B, rows.shape[1])
            if self.batch_first:
                output = output.transpose(0, 1)
        else:
            output, h_n, c_n = self._run(input, batch_sizes, h0, c0)
        hidden = (h_n, c_n) if lstm else h_n
        if isinstance(orig, PackedSequence):
            return PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = (h_n.squeeze(1), c_n.squeeze(1)) if lstm else h_n.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)

    def _initial_state(self, input, hx, is_batched, mini_batch, batch_sizes, sorted_indices):
        if hx is None:
            size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = self._zeros(input, mini_batch, size)
            if self.mode == "LSTM":
                hx = (hx, self._zeros(input, mini_batch, self.hidden_size))
            self.check_forward_args(input, hx, batch_sizes)
            return hx
        if self.mode == "LSTM":
            return self._lstm_hx(input, hx, is_batched, batch_sizes, sorted_indices)
        if batch_sizes is None:
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        return hx


def _empty(shape, dtype):
    from ..._ops.creation import empty

    return empty(shape, dtype=dtype)


class RNN(RNNBase):
    r"""Multi-layer Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or ReLU).

    Args:
        input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
        bidirectional=False: as torch.nn.RNN.

    Shape:
        input (L, N, H_in), (N, L, H_in) with batch_first, (L, H_in) unbatched, or a PackedSequence;
        h_0 (D * num_layers, N, H_out). Returns (output, h_n).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class LSTM(RNNBase):
    r"""Multi-layer long short-term memory RNN, with optional projections (`proj_size`).

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
        proj_size=0: as torch.nn.LSTM.

    Shape:
        input as nn.RNN; (h_0, c_0) with h_0 (D * num_layers, N, proj_size or hidden_size) and c_0
        (D * num_layers, N, hidden_size). Returns (output, (h_n, c_n)).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def _lstm_hx(self, input, hx, is_batched, batch_sizes, sorted_indices):
        if batch_sizes is None:
            if is_batched and (hx[0].dim() != 3 or hx[1].dim() != 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, batch_sizes)
            return self.permute_hidden(hx, sorted_indices)
        hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        return hx

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    r"""Multi-layer gated recurrent unit RNN (gates r, z, n in torch's order).

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False:
        as torch.nn.GRU.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


# ---- cells -------------------------------------------------------------------------------------------------


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty((num_chunks * hidden_size, input_size), dtype))
        self.weight_hh = Parameter(_empty((num_chunks * hidden_size, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(_empty((num_chunks * hidden_size,), dtype))
            self.bias_hh = Parameter(_empty((num_chunks * hidden_size,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, mode, name, input, hx, hidden_word="hidden"):
        """Shared by the cells: unbatched handling, torch's checks, one step of `mode`."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = () if hx is None else (hx if mode == "LSTM" else (hx,))
        for i, v in enumerate(states):
            if v.dim() not in (1, 2):
                what = f"hx[{i}]" if mode == "LSTM" else hidden_word
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {v.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            states = (z, z) if mode == "LSTM" else (z,)
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        self._check_step(input, states)
        gi = _R._linear(input, self.weight_ih, self.bias_ih)
        gh = _R._linear(states[0], self.weight_hh, self.bias_hh)
        out = _R.cell_math(mode, gi, gh, states[0], states[1] if mode == "LSTM" else None)
        if not is_batched:
            out = tuple(o.squeeze(0) for o in out)
        return out if mode == "LSTM" else out[0]

    def _check_step(self, input, states):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for i, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size "
                                   f"{s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or ReLU)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", "RNNCell", input, hx)


class LSTMCell(RNNCellBase):
    r"""A long short-term memory cell; forward(input, (h, c)) returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("LSTM", "LSTMCell", input, hx)


class GRUCell(RNNCellBase):
    r"""A gated recurrent unit cell."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", "GRUCell", input, hx)

