"""`torch._dynamo.explain(fn)(*args)`: run `fn` compiled and report its graphs, breaks and guards."""

from __future__ import annotations

from . import eval_frame


class BreakReason:
    def __init__(self, reason, user_stack):
        self.reason, self.user_stack = reason, user_stack

    def __repr__(self):
        return f"BreakReason(reason={self.reason!r}, user_stack={self.user_stack!r})"


class ExplainOutput:
    """torch's fields: graphs, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph,
    out_guards, compile_times."""

    def __init__(self, graphs, break_reasons, ops_per_graph, out_guards, compile_times=""):
        self.graphs = graphs
        # NOTE [ What explain counts ]
        # As torch's: every graph after the first is counted as one break (a frame whose capture was
        # split, or a callee frame compiled on its own, adds graphs), and `break_reasons` has one entry
        # per graph that was compiled because capture stopped at a break; a break with nothing captured
        # before it compiles no graph and leaves no reason.
        self.graph_count = len(graphs)
        self.graph_break_count = len(graphs) - 1
        self.break_reasons = break_reasons
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(len(ops) for ops in ops_per_graph)
        self.out_guards = out_guards
        self.compile_times = compile_times

    def __str__(self):
        out = f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\n"
        out += f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for i, r in enumerate(self.break_reasons):
            out += f"  Break Reason {i + 1}:\n    Reason: {r.reason}\n    User Stack:\n"
            out += "".join(f"      {s}\n" for s in r.user_stack)
        out += "Ops per Graph:\n"
        for i, ops in enumerate(self.ops_per_graph):
            out += f"  Ops {i + 1}:\n" + "".join(f"    {op}\n" for op in ops)
        out += "Out Guards:\n" + "".join(
            f"  Guard {i + 1}:\n    {g}\n" for i, g in enumerate(self.out_guards)
        )
        return out


class _Observer:
    def __init__(self):
        self.graphs, self.breaks, self.ops, self.guards = [], [], [], []

    def on_graph(self, gm, example_inputs):
        self.graphs.append(gm)
        self.ops.append(
            [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
        )

    def on_break(self, reason, user_line):
        self.breaks.append(BreakReason(reason, user_line))

    def on_guards(self, exprs):
        self.guards.extend(exprs)


def explain(f, *extra_args, **extra_kwargs):
    """`explain(f)(*args, **kwargs)` -> ExplainOutput (the older `explain(f, *args)` form works too)."""
    from . import _compile, reset

    def inner(*args, **kwargs):
        reset()
        obs = _Observer()
        eval_frame._observers.append(obs)
        try:
            _compile(f, backend="eager")(*args, **kwargs)
        finally:
            eval_frame._observers.remove(obs)
        return ExplainOutput(obs.graphs, obs.breaks, obs.ops, obs.guards)

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
