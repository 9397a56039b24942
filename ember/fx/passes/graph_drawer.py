"""`FxGraphDrawer`: a graph as Graphviz dot text (and SVG where the `dot` program is installed).

torch's drawer builds a `pydot` graph; here the dot source is written directly, one record-shaped node per
fx node (its name, kind, target and, after `ShapeProp`, shape and dtype) and one edge per argument use.
`get_dot_graph()` returns a `DotGraph` whose `to_string()` is the dot text and whose `create_svg()` runs the
`dot` program (a RuntimeError saying so when it is not installed).
"""

from __future__ import annotations

import shutil
import subprocess

__all__ = ["FxGraphDrawer", "DotGraph"]


def _escape(s: str) -> str:
    """Text inside a dot record label: its special characters escaped."""
    out = str(s).replace("\\", "\\\\").replace('"', '\\"')
    for ch in "{}<>|":
        out = out.replace(ch, "\\" + ch)
    return out


class DotGraph:
    """Dot source of a graph: `to_string()`, and `create_svg()` through the `dot` program."""

    def __init__(self, source: str):
        self.source = source

    def to_string(self) -> str:
        return self.source

    def create_svg(self) -> bytes:
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError("FxGraphDrawer: the Graphviz `dot` program is not installed; to_string() gives "
                               "the dot source")
        return subprocess.run([exe, "-Tsvg"], input=self.source.encode(), capture_output=True,
                              check=True).stdout


class FxGraphDrawer:
    """Draw a GraphModule's graph as dot (torch.fx.passes.graph_drawer.FxGraphDrawer)."""

    def __init__(self, graph_module, name: str, ignore_getattr: bool = False, **kwargs):
        self._name = name
        self._dot = DotGraph(self._to_dot(graph_module, ignore_getattr))

    def get_dot_graph(self, submod_name=None) -> DotGraph:
        return self._dot

    def get_main_dot_graph(self) -> DotGraph:
        return self._dot

    def get_all_dot_graphs(self) -> dict:
        return {self._name: self._dot}

    def _to_dot(self, gm, ignore_getattr: bool) -> str:
        from ..node import _target_str

        lines = [f'digraph "{_escape(self._name)}" {{', '  rankdir=TB;', '  node [shape=record];']
        for n in gm.graph.nodes:
            if ignore_getattr and n.op == "get_attr":
                continue
            label = [f"name=%{n.name}", f"op_code={n.op}"]
            if n.op != "placeholder" and n.op != "output":
                label.append(f"target={_target_str(n.target)}")
            tm = n.meta.get("tensor_meta")
            if tm is not None and hasattr(tm, "shape"):
                label += [f"shape={tuple(tm.shape)}", f"dtype={tm.dtype}"]
            fill = {"placeholder": "AliceBlue", "output": "LemonChiffon", "get_attr": "Gainsboro",
                    "call_module": "LightGrey"}.get(n.op, "white")
            body = "|".join(_escape(x) for x in label)
            lines.append(f'  "{n.name}" [label="{{{body}}}", style=filled, fillcolor={fill}];')
        for n in gm.graph.nodes:
            for a in n.all_input_nodes:
                if ignore_getattr and a.op == "get_attr":
                    continue
                lines.append(f'  "{a.name}" -> "{n.name}";')
        lines.append("}")
        return "\n".join(lines) + "\n"
