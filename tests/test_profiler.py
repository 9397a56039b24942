"""The profiler against torch's: op and node names, ranges, schedules, the table's format, memory,
the Chrome trace and its handlers, errors; and that a profiler that is off leaves nothing behind."""

import gzip
import json
import threading
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.profiler_util as tpu

import ember
import ember.autograd.profiler_util as epu
from ember.autograd import engine
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((5, 3)).astype(np.float32)


def names(lib, fn, **kw):
    """The event names, in start order, of running fn(lib) under lib's profiler."""
    with lib.profiler.profile(**kw) as p:
        fn(lib)
    return [e.name for e in sorted(p.events(), key=lambda e: e.time_range.start)]


# programs whose op sequence is the same in both: ember's registered ops carry aten's names
PROGRAMS = {
    "pointwise": lambda L: L.from_numpy(A).mul(2).add(1).exp().relu(),
    "reductions": lambda L: (L.from_numpy(A).sum(), L.from_numpy(A).amax(1), L.from_numpy(A).max()),
    "mm": lambda L: L.from_numpy(A).mm(L.from_numpy(B)),
    "inplace": lambda L: L.from_numpy(A.copy()).add_(1).mul_(2),
}


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_op_names_match_torch(prog):
    mine = names(ember, PROGRAMS[prog])
    theirs = [n for n in names(torch, PROGRAMS[prog]) if n in mine or not n.startswith("aten::")]
    assert [n for n in mine if n.startswith("aten::")] == [n for n in theirs if n.startswith("aten::")]


def backward_names(lib):
    x = lib.from_numpy(A).requires_grad_()
    with lib.profiler.profile() as p:
        (x * 3).exp().sum().backward()
    return {e.name for e in p.events() if "Backward" in e.name}


def test_backward_nodes_are_ranges_as_torchs():
    mine = backward_names(ember)
    assert mine == backward_names(torch) & mine
    assert "autograd::engine::evaluate_function: MulBackward0" in mine and "ExpBackward0" in mine


def test_ranges_nest_and_record_function():
    @record_function("decorated")
    def f(x):
        return x.exp()

    with profile() as p:
        with record_function("outer"):
            f(ember.from_numpy(A)).sum()
    ev = {e.name: e for e in p.events()}
    assert ev["outer"].is_user_annotation and ev["decorated"].cpu_parent is ev["outer"]
    assert ev["aten::exp"].cpu_parent is ev["decorated"] and ev["aten::sum"].cpu_parent is ev["outer"]
    for e in p.events():
        assert sum(c.cpu_time_total for c in e.cpu_children) <= e.cpu_time_total
        for c in e.cpu_children:
            assert e.start_us <= c.start_us <= c.end_us <= e.end_us
    total = sum(e.self_cpu_time_total for e in p.events())
    assert abs(total - ev["outer"].cpu_time_total) < 1e-6
    with record_function("unprofiled"):  # costs nothing and records nothing with no profiler
        ember.ones(2)


def test_record_shapes_match_torch():
    def run(L):
        with L.profiler.profile(record_shapes=True) as p:
            L.from_numpy(A).mm(L.from_numpy(B))
            L.from_numpy(A).add(L.from_numpy(A[:1]), alpha=2)
        return {(e.key, str(e.input_shapes)) for e in p.key_averages(group_by_input_shape=True)}
    mine, theirs = run(ember), run(torch)
    assert ("aten::mm", "[[4, 5], [5, 3]]") in mine
    assert ("aten::add", "[[4, 5], [1, 5], []]") in mine
    assert {k for k in mine if k[0] in ("aten::mm", "aten::add")} <= theirs


def test_memory_matches_torch():
    def run(L):
        x = L.from_numpy(A)
        with L.profiler.profile(profile_memory=True) as p:
            y = x * x          # a new 80-byte buffer (x * 2 would make torch wrap the 2 in a tensor)
            z = y.view(20)     # a view: nothing
            del y, z           # both die: the buffer is freed
            w = x.sum()        # 4 bytes, kept alive
        return {e.key: (e.cpu_memory_usage, e.self_cpu_memory_usage) for e in p.key_averages()}, w
    (mine, _), (theirs, _) = run(ember), run(torch)
    for k in ("aten::mul", "aten::view", "aten::sum"):
        assert mine[k] == theirs[k], k


def test_with_stack_points_at_the_caller():
    with profile(with_stack=True) as p:
        ember.ones(3).exp()  # this line
    (exp,) = [e for e in p.events() if e.name == "aten::exp"]
    assert exp.stack and exp.stack[0].startswith(__file__)
    assert exp.stack[0].endswith("test_with_stack_points_at_the_caller")
    table = p.key_averages(group_by_stack_n=2).table(row_limit=3)
    assert "Source Location" in table and "test_profiler.py" in table


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
                                dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
                                dict(wait=3, warmup=1, active=1, skip_first_wait=1)])
def test_schedule_matches_torch(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = schedule(**kw), torch.profiler.schedule(**kw)
    assert [mine(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


def test_schedule_cycles_and_trace_ready_as_torchs():
    def run(L):
        calls = []

        def ready(p):
            calls.append((p.step_num, sorted({e.name for e in p.events() if not e.name.startswith("aten::")}),
                          sum(e.name == "aten::exp" for e in p.events())))
        sched = L.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
        with L.profiler.profile(schedule=sched, on_trace_ready=ready) as p:
            for _ in range(9):
                L.ones(2).exp()
                p.step()
        return calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(ember) == run(torch)


def test_table_format_equals_torchs():
    """The same events (times, memory, shapes, nesting) give torch's table, character for character."""
    spec = [(0, "outer", 0.0, 100.0, None, 64), (1, "aten::mm", 10.0, 40.5, 0, 48),
            (2, "aten::add", 50.0, 52.25, 0, 16), (3, "aten::mm", 60.0, 90.0, 0, 0),
            (4, "a_rather_long_user_range_name_that_will_not_fit_the_column", 91.0, 99.0, 0, -32)]

    def build(mod):
        evs = {}
        for id_, name, start, end, _, mem in spec:
            shapes = [[4, 5], [5, 3]] if name == "aten::mm" else []
            e = mod.FunctionEvent(id=id_, name=name, thread=1, start_us=start, end_us=end, input_shapes=shapes,
                                  cpu_memory_usage=mem) if mod is epu else \
                mod.FunctionEvent(id=id_, name=name, thread=1, start_us=start, end_us=end, input_shapes=shapes,
                                  cpu_memory_usage=mem, overload_name="", stack=[])
            evs[id_] = e
        for id_, _, _, _, parent, _ in spec:
            if parent is not None:
                evs[id_].cpu_parent = evs[parent]
                evs[parent].cpu_children.append(evs[id_])
        return mod.EventList(list(evs.values()), profile_memory=True)
    mine, theirs = build(epu), build(tpu)
    theirs._tree_built = True
    for kw in (dict(), dict(sort_by="self_cpu_time_total"), dict(sort_by="cpu_time_total", row_limit=2),
               dict(time_unit="ms", header="HEADER"), dict(top_level_events_only=True)):
        assert mine.key_averages().table(**kw) == theirs.key_averages().table(**kw), kw
        assert mine.table(**kw) == theirs.table(**kw), kw
    assert mine.key_averages(group_by_input_shapes=True).table() == \
        theirs.key_averages(group_by_input_shapes=True).table()
    t = mine.total_average()
    assert (t.key, t.count, t.cpu_time_total) == ("Total", 5, theirs.total_average().cpu_time_total)


def test_chrome_trace_is_trace_event_format(tmp_path):
    x = ember.from_numpy(A).requires_grad_()
    with profile(record_shapes=True, profile_memory=True) as p:
        with record_function("fwd"):
            y = (x * 2).sum()
        y.backward()
    for path in (tmp_path / "t.json", tmp_path / "t.json.gz"):
        p.export_chrome_trace(str(path))
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        assert trace["displayTimeUnit"] in ("ms", "ns")
        for e in events:  # the Trace Event Format's required fields and types
            assert e["ph"] in ("X", "M", "i") and isinstance(e["name"], str)
            assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
            assert isinstance(e["ts"], (int, float))
            if e["ph"] == "X":
                assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0 and e["cat"] in ("cpu_op",
                                                                                            "user_annotation")
        complete = [e for e in events if e["ph"] == "X"]
        names_ = {e["name"] for e in complete}
        assert {"fwd", "aten::mul", "aten::sum", "autograd::engine::evaluate_function: MulBackward0"} <= names_
        mul = next(e for e in complete if e["name"] == "aten::mul")
        assert mul["args"]["Input Dims"] == [[4, 5], []] and mul["args"]["Input type"][0] == "float"
        assert any(e["ph"] == "i" and e["name"] == "[memory]" and e["args"]["Bytes"] == 80 for e in events)


def test_tensorboard_trace_handler(tmp_path):
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0", use_gzip=True)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2), on_trace_ready=handler) as p:
        for _ in range(4):
            ember.ones(3).exp()
            p.step()
    files = sorted((tmp_path / "tb").iterdir())
    assert len(files) == 2 and all(f.name.startswith("w0.") and f.name.endswith(".pt.trace.json.gz") for f in files)
    with gzip.open(files[0], "rt") as f:
        assert any(e["name"].startswith("ProfilerStep#") for e in json.load(f)["traceEvents"])


def test_errors_and_warnings_as_torchs():
    p = ember.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        p.key_averages()
    with pytest.raises(AssertionError, match="No activities specified for the profiler"):
        with ember.profiler.profile(activities=[ProfilerActivity.CUDA]):
            pass
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ember.autograd.profiler.profile(use_cuda=True):
            ember.ones(1)
    assert [str(m.message) for m in w] == ["The attribute `use_cuda` will be deprecated soon, please use "
                                           "``use_device = 'cuda'`` instead.",
                                           "CUDA is not available, disabling CUDA profiling"]
    assert ember.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert [a.name for a in ProfilerAction] == [a.name for a in torch.profiler.ProfilerAction]
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with ember.autograd.profiler.emit_nvtx():
            pass


def test_off_leaves_nothing_and_other_threads_unrecorded():
    seen = []
    with profile() as p:
        t = threading.Thread(target=lambda: seen.append(ember.ones(2).exp()))
        t.start()
        t.join()
        ember.ones(2).sum()
    from ember.profiler._recorder import Recorder

    def left_behind():  # other tests may leave their own modes; no recorder may stay
        return [m for m in ember._dispatch._modes if isinstance(m, Recorder)] + engine._node_observers

    assert "aten::exp" not in {e.name for e in p.events()} and seen
    assert not left_behind()
    with pytest.raises(ZeroDivisionError):
        with profile():
            raise ZeroDivisionError
    assert not left_behind()


def test_legacy_profile_table_runs_on_a_model():
    m = ember.nn.Sequential(ember.nn.Linear(5, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    with ember.autograd.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        m(ember.from_numpy(A)).sum().backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "CPU", "Mem", "Self", "CPU", "Mem", "#", "of", "Calls"]
    assert len(lines) == 5 + 5 and lines[-1].startswith("Self CPU time total: ")
    assert prof.self_cpu_time_total > 0


def test_step_tracker_and_enforce_unique_as_torchs():
    def run(ap):
        t = ap.KinetoStepTracker
        base = t.current_step()
        seq = [t.increment_step(r) - base for r in ("optA", "optB", "optA", "optA", "optB")]
        erased = (t.erase_step_count("optA"), t.erase_step_count("optA"), t.erase_step_count("optB"))
        return seq, erased
    assert run(ember.autograd.profiler) == run(torch.autograd.profiler)
    u = ember.autograd.profiler.EnforceUnique()
    u.see("a", 1)
    with pytest.raises(RuntimeError, match=r"duplicate key: \('a', 1\)"):
        u.see("a", 1)
