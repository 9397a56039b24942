"""Looking at an autograd graph: as an indented text tree, or as Graphviz dot source.

`format_graph(t)` (and `print_graph(t)`) walk from `t.grad_fn` through `next_functions`, one line per
node, with box-drawing branches; a node reached a second time is printed once and then referred to as
`(seen above)`, so shared subgraphs do not repeat. `to_dot(t)` gives the same graph as a `digraph` in the
dot language (the torchviz look: leaves light blue, the root's output green), to render with
`dot -Tpng`. Both accept a tensor, a Node, or a list of tensors; `params` (a dict such as
`dict(model.named_parameters())`) names the leaves.

Example::

    >>> x = ember.ones(2, requires_grad=True)
    >>> y = (x * 2).sum()
    >>> print(ember.autograd.graph.format_graph(y, params={"x": x}))
    SumBackward0
    └── MulBackward0
        ├── AccumulateGrad  x [2]
        └── None
"""

__all__ = ["format_graph", "print_graph", "to_dot", "save_graph"]


def _roots(obj):
    from .._tensor import Tensor

    items = obj if isinstance(obj, (list, tuple)) else [obj]
    roots = []
    for it in items:
        if isinstance(it, Tensor):
            fn = it.grad_fn
            if fn is None and it.requires_grad:
                from .graph import _leaf_node

                fn = _leaf_node(it)
            roots.append(fn)
        else:
            roots.append(it)
    return roots


def _label(node, names):
    from .graph import AccumulateGrad

    if node is None:
        return "None"
    if type(node) is AccumulateGrad:
        v = node.variable
        name = names.get(id(v), "")
        shape = "[" + ", ".join(map(str, v.shape)) + "]"
        return f"AccumulateGrad  {name + ' ' if name else ''}{shape}"
    return node.name()


def format_graph(obj, params=None):
    """The graph behind `obj` (tensor, Node or list of them) as an indented text tree."""
    names = {id(v): k for k, v in (params or {}).items()}
    lines = []
    seen = set()
    for root in _roots(obj):
        if root is None:
            lines.append("None (no grad_fn: the tensor is not part of an autograd graph)")
            continue
        _walk(root, "", "", lines, seen, names)
    return "\n".join(lines)


def _walk(node, lead, branch, lines, seen, names):
    # iterative over children, recursive in depth: graphs deeper than Python's recursion limit are
    # printed up to it, which is far more than a person reads
    label = _label(node, names)
    if node is not None and id(node) in seen and node.next_functions:
        lines.append(f"{lead}{branch}{label} (seen above)")
        return
    lines.append(f"{lead}{branch}{label}")
    if node is None:
        return
    seen.add(id(node))
    child_lead = lead + ("" if branch == "" else "    " if branch == "└── " else "│   ")
    kids = node.next_functions
    for i, (nxt, _) in enumerate(kids):
        _walk(nxt, child_lead, "└── " if i == len(kids) - 1 else "├── ", lines, seen, names)


def print_graph(obj, params=None):
    """Print `format_graph(obj, params)`."""
    print(format_graph(obj, params))


def to_dot(obj, params=None, show_saved=False):
    """The graph behind `obj` as Graphviz dot source (a string). Leaves are light blue boxes labelled
    with their name (from `params`) and shape; `show_saved` adds each op node's saved input shapes."""
    from .._tensor import Tensor
    from .graph import AccumulateGrad, OpNode, SavedTensor

    names = {id(v): k for k, v in (params or {}).items()}
    out = ["digraph {", '    graph [size="12,12"]',
           '    node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]']
    seen = set()
    stack = [r for r in _roots(obj) if r is not None]
    for r in stack:
        out.append(f'    root_{id(r)} [label="output" fillcolor=darkolivegreen1]')
        out.append(f"    {id(r)} -> root_{id(r)}")
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        label = _label(node, names)
        color = "lightblue" if type(node) is AccumulateGrad else "lightgrey"
        if show_saved and isinstance(node, OpNode):
            saved = [s.tensor if type(s) is SavedTensor else s for s in node._saved or ()]
            shapes = [list(t.shape) for t in saved if isinstance(t, Tensor)]
            if shapes:
                label += "\\nsaved: " + " ".join(map(str, shapes))
        out.append(f'    {id(node)} [label="{label}" fillcolor={color}]')
        for nxt, _ in node.next_functions:
            if nxt is not None:
                out.append(f"    {id(nxt)} -> {id(node)}")
                stack.append(nxt)
    out.append("}")
    return "\n".join(out)


def save_graph(obj, path, params=None, show_saved=False):
    """Write the graph behind `obj` to `path`: dot source for `.dot`, an image for `.svg` / `.png` / `.pdf`
    (rendered by Graphviz's `dot` program). One line in a training script:
    `ember.autograd.graph.save_graph(loss, "graph.svg", params=dict(model.named_parameters()))`."""
    from ..utils._graphviz import save_dot

    return save_dot(to_dot(obj, params, show_saved), path)
