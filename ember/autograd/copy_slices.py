"""In-place ops on views of tensors that autograd tracks.

NOTE [ CopySlices ]
`y = x * 2; y[:, 0] = 0` writes through a view into y's memory, so y's history must change: after the
write, y's grad_fn is a CopySlices node. Its backward takes the gradient of the whole base, runs the
in-place op's own derivative on the region the view covers, writes the result for the old view values
back into that region and passes the rest of the base's gradient through unchanged. The view itself then
gets a fresh AsStridedBackward0 node pointing at the base, so gradients through it see the new history.
Other views of the same base notice the base's version changed and regenerate their grad_fn the same way
when next used (`graph.refresh_view_grad_fn`).
"""

import numpy as np

from .._meta import MetaArray
from .._tensor import _wrap
from .graph import Node, grad_edge, record, refresh_view_grad_fn, saved_before_write


class CopySlices(Node):
    """Backward of an in-place op applied to a view: see NOTE [ CopySlices ]."""

    __module__ = "builtins"  # a C type in torch: <class 'CopySlices'>

    def __init__(self, base, view, op_node):
        super().__init__()
        self.base_shape = tuple(base.shape)
        self.base_strides = base.stride()
        self.size = tuple(view.shape)
        self.stride = view.stride()
        self.offset = view.storage_offset() - base.storage_offset()
        self.fn = op_node
        self.next_functions = (grad_edge(base),) + op_node.next_functions[1:]

    def apply(self, grads):
        from .. import empty_strided

        g = grads[0]
        if g is None:
            return (None,) * len(self.next_functions)
        res = empty_strided(self.base_shape, self.base_strides, dtype=g.dtype)
        res.copy_(g)
        region = res.as_strided(self.size, self.stride, res.storage_offset() + self.offset)
        sub = self.fn.apply((region.clone(),))
        if sub[0] is None:
            region.zero_()
        else:
            region.copy_(sub[0])
        return (res,) + tuple(sub[1:])

    def name(self):
        return "ember::autograd::CopySlices"

    def release(self):
        self.fn.release()


def rebase_view(op, view, inputs, params, old_data):
    base = view._base
    if old_data is None:  # (the derivative reads no input values: a copy only for its metadata)
        d = view._data
        old_data = np.array(d) if type(d) is np.ndarray else MetaArray(d.shape, d.dtype, d.strides)
    old_view = _wrap(old_data)
    old_view._requires_grad = True
    op_node = record(op, (old_view,) + tuple(inputs[1:]), params, _wrap(view._data))
    saved_before_write(op_node, view._vc)
    node = CopySlices(base, view, op_node)
    base._grad_fn, base._requires_grad, base._output_nr = node, True, 0
    # the view's new history: a strided view of the rewritten base
    refresh_view_grad_fn(view)
    view._requires_grad = True
