"""The DataPipe names of torch.utils.data against torch's: subclassing, the one-valid-iterator rule,
functional registration, the determinism and validation decorators, DataChunk."""

import warnings

import pytest
import torch.utils.data as tdata
from compare import normalize_message

import ember.utils.data as edata


def _program(D, step):
    class Count(D.IterDataPipe):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    name = f"times_{step}_{id(D)}"

    @D.functional_datapipe(name)
    class Times(D.IterDataPipe):
        def __init__(self, dp, k=2):
            self.dp, self.k = dp, k

        def __iter__(self):
            for x in self.dp:
                yield x * self.k

    class Table(D.MapDataPipe):
        def __getitem__(self, i):
            return i * 10

        def __len__(self):
            return 3

    p = Count(4)
    steps = {
        "subclass": lambda: (repr(p), str(p), isinstance(p, D.IterableDataset), list(p), list(p)),
        "functional": lambda: (list(getattr(p, name)()), list(getattr(p, name)(k=3)), repr(getattr(p, name)())),
        "missing_attribute": lambda: p.no_such_function,
        "second_iterator_invalidates_first": lambda: (lambda a, b: (next(b), next(a)))(iter(p), iter(p)),
        "nested_iteration": lambda: [(x, list(Count(x))) for x in Count(3)],
        "map_datapipe": lambda: (repr(Table()), isinstance(Table(), D.Dataset), [Table()[i] for i in range(3)]),
        "datachunk": lambda: (lambda c: (c.as_str("  "), repr(c), list(c.raw_iterator()), c == [1, 2]))(
            D.DataChunk((1, 2))),
        "non_deterministic_class": lambda: _guarded(D, lambda: D.non_deterministic(Count)(2)),
        "non_deterministic_fn": lambda: _guarded(D, lambda: D.non_deterministic(lambda n: n > 1)(Count)(2)),
        "non_deterministic_fn_ok": lambda: list(D.non_deterministic(lambda n: n > 1)(Count)(1)),
        "non_deterministic_bad": lambda: D.non_deterministic(int),
        "runtime_validation_name": lambda: D.runtime_validation(len),
        "runtime_validation": lambda: list(D.runtime_validation(Count.__iter__)(Count(2))),
        "runtime_validation_disabled": lambda: (lambda c: (c.__enter__(), list(
            D.runtime_validation(Count.__iter__)(Count(2))), c.__exit__(None, None, None)))(
            D.runtime_validation_disabled()),
        "argument_validation": lambda: D.argument_validation(lambda dp, k=1: k)(p, k=5),
        "functional_on_other_class": lambda: D.functional_datapipe("unused")(int) is int,
    }
    return steps[step]()


def _guarded(D, fn):
    with D.guaranteed_datapipes_determinism():
        return fn()


STEPS = ["subclass", "functional", "missing_attribute", "second_iterator_invalidates_first", "nested_iteration",
         "map_datapipe", "datachunk", "non_deterministic_class", "non_deterministic_fn", "non_deterministic_fn_ok",
         "non_deterministic_bad", "runtime_validation_name", "runtime_validation", "runtime_validation_disabled",
         "argument_validation", "functional_on_other_class"]


@pytest.mark.parametrize("step", STEPS)
def test_datapipes(step):
    outcomes = []
    for D in (tdata, edata):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = ("ok", repr(_program(D, step)))
            except Exception as err:  # noqa: BLE001 - compared below
                r = (type(err).__name__, normalize_message(str(err)))
        outcomes.append(r)
    assert outcomes[1] == outcomes[0]
