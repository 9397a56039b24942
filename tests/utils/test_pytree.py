"""ember.utils._pytree against torch.utils._pytree: the same leaves, specs (printed and serialized), maps,
key paths and errors, on a table of trees."""

from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch.utils._pytree as tp
from compare import normalize_message

import ember.utils._pytree as ep

Point = namedtuple("Point", "x y")

TREES = {
    "leaf": 3,
    "none": None,
    "list": [1, 2, 3],
    "nested": [1, (2, 3), [4, [5]]],
    "dict_insertion_order": {"b": 1, "a": 2, "c": [3, 4]},
    "namedtuple": Point(1, (2, 3)),
    "ordered_dict": OrderedDict([("z", 1), ("y", 2)]),
    "defaultdict": defaultdict(list, {"q": 1, "p": [2]}),
    "deque": deque([1, 2], maxlen=4),
    "empty": [(), {}, []],
    "mixed": {"w": [Point(1, 2), OrderedDict(k=3)], "n": None, "s": "str"},
}


def _both(fn):
    return fn(tp), fn(ep)


@pytest.mark.parametrize("name", list(TREES))
def test_flatten_unflatten(name):
    tree = TREES[name]
    (tl, ts), (el, es) = _both(lambda m: m.tree_flatten(tree))
    assert el == tl
    assert repr(es) == repr(ts)
    assert (es.num_leaves, es.num_nodes, es.num_children, es.is_leaf()) == \
        (ts.num_leaves, ts.num_nodes, ts.num_children, ts.is_leaf())
    rebuilt = ep.tree_unflatten(el, es)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert ep.treespec_pprint(es) == tp.treespec_pprint(ts)
    assert ep.tree_leaves(tree) == tp.tree_leaves(tree)
    assert ep.tree_structure(tree) == es and hash(es) == hash(ep.tree_structure(tree))


@pytest.mark.parametrize("name", [n for n in TREES if n not in ("namedtuple", "mixed")])
def test_serialization_is_torchs(name):
    ts, es = tp.tree_structure(TREES[name]), ep.tree_structure(TREES[name])
    assert ep.treespec_dumps(es) == tp.treespec_dumps(ts)
    assert repr(ep.treespec_loads(tp.treespec_dumps(ts))) == repr(ts)


@pytest.mark.parametrize("name", list(TREES))
def test_paths(name):
    tree = TREES[name]
    t, e = _both(lambda m: [(m.keystr(k), v) for k, v in m.tree_leaves_with_path(tree)])
    assert e == t
    t, e = _both(lambda m: m.tree_map_with_path(lambda k, v: (m.keystr(k), v), tree))
    assert e == t
    for path, leaf in ep.tree_leaves_with_path(tree):
        assert ep.key_get(tree, path) is leaf


MAPS = [
    lambda m: m.tree_map(lambda x: x * 2, [1, {"a": 2, "b": (3,)}]),
    lambda m: m.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]),
    lambda m: m.tree_map(lambda x, y: (x, y), [1, 2], [[1, 2], {"a": 3}]),
    lambda m: m.tree_map(lambda x, y: x, {"a": 1, "b": 2}, OrderedDict(b=3, a=4)),
    lambda m: m.tree_map(lambda x, y: x, {"a": 1}, {"b": 1}),
    lambda m: m.tree_map(lambda x, y: x, [1, 2], [1, 2, 3]),
    lambda m: m.tree_map(lambda x, y: x, [1, 2], (1, 2)),
    lambda m: m.tree_map(lambda x, y: x, Point(1, 2), (1, 2)),
    lambda m: m.tree_map_only(int, lambda x: -x, [1, 2.5, "s", (3,)]),
    lambda m: m.tree_map_only((int, str), lambda x: x * 2, [1, 2.5, "s"]),
    lambda m: m.tree_map_only(lambda x: x == 2, lambda x: 0, [1, 2, 3]),
    lambda m: m.tree_map_only(3, lambda x: x, [1]),
    lambda m: m.tree_map(lambda x: x, [1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple)),
    lambda m: (m.tree_all(lambda x: x > 0, [1, (2,)]), m.tree_any(lambda x: x > 1, [1, (2,)])),
    lambda m: (m.tree_all_only(int, lambda x: x > 0, [1, -2.0]), m.tree_any_only(float, lambda x: x > 0, [1, -2.0])),
    lambda m: m.tree_unflatten([1, 2], m.tree_structure([0])),
    lambda m: m.tree_unflatten(m.tree_structure([0, 0]), [1, 2]),
    lambda m: m.tree_unflatten([1], [2]),
    lambda m: m.tree_structure([0, {"a": 0}]).flatten_up_to([[1], {"a": (2, 3)}]),
    lambda m: [m.is_namedtuple(Point(1, 2)), m.is_namedtuple_class(Point), m.is_namedtuple_instance((1,)),
               m.is_structseq(__import__("os").stat(".")), m.is_structseq_class(tuple), m.tree_is_leaf(None),
               m.tree_is_leaf([1], is_leaf=lambda x: True)],
    lambda m: m.treespec_dumps(m.tree_structure(Point(1, 2))),
    lambda m: m.treespec_dumps(m.tree_structure([1]), protocol=7),
    lambda m: m.treespec_loads('[2, {}]'),
]


@pytest.mark.parametrize("i", range(len(MAPS)))
def test_maps_and_errors(i):
    outcomes = []
    for m in (tp, ep):
        try:
            outcomes.append(("ok", repr(MAPS[i](m))))
        except Exception as err:  # noqa: BLE001 - the two must fail alike
            outcomes.append((type(err).__name__, normalize_message(str(err))))
    assert outcomes[1] == outcomes[0]


def test_register_pytree_node_and_map_():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    results = []
    for m in (tp, ep):
        cls = type("Box", (Box,), {})
        m.register_pytree_node(cls, lambda x: ([x.a, x.b], "ctx"), lambda v, c: cls(*v),
                               serialized_type_name="test.Box",
                               flatten_with_keys_fn=lambda x: ([(m.GetAttrKey("a"), x.a), (m.GetAttrKey("b"), x.b)],
                                                               "ctx"))
        try:
            leaves, spec = m.tree_flatten([cls(1, [2, 3])])
            seen = []
            m.tree_map_(seen.append, [cls(4, 5)])
            paths = [m.keystr(k) for k, _ in m.tree_leaves_with_path(cls(1, 2))]
            dumped = m.treespec_dumps(spec)
            with pytest.raises(ValueError) as err:
                m.register_pytree_node(cls, lambda x: ([], None), lambda v, c: cls(0, 0))
            results.append((leaves, repr(spec).replace(repr(cls), "Box"), seen, paths, dumped,
                            str(err.value).replace(str(cls), "Box")))
        finally:
            m._deregister_pytree_node(cls)
    assert results[1] == results[0]


def test_leafspec_and_frozen():
    assert repr(ep.LeafSpec()) == "*" and ep.LeafSpec().is_leaf()
    assert ep.tree_structure(1) == ep.LeafSpec()
    with pytest.raises(Exception) as e_err:
        ep.tree_structure([1]).num_leaves = 3
    with pytest.raises(Exception) as t_err:
        tp.tree_structure([1]).num_leaves = 3
    assert type(e_err.value).__name__ == type(t_err.value).__name__


RETURN_TYPES = [
    lambda lib, x: lib.max(x, 0),
    lambda lib, x: lib.sort(x),
    lambda lib, x: lib.aminmax(x),
    lambda lib, x: [lib.topk(x, 1), {"m": lib.min(x, 1)}],
]


@pytest.mark.parametrize("make", RETURN_TYPES)
def test_return_types_are_nodes_of_their_own(make):
    import numpy as np
    import torch

    import ember

    x = np.arange(6.0).reshape(2, 3)
    results = []
    for lib, m in ((torch, tp), (ember, ep)):
        tree = make(lib, lib.tensor(x))
        spec = m.tree_structure(tree)
        shapes = m.tree_map(lambda t: tuple(t.shape), tree)
        rebuilt = m.tree_unflatten(m.tree_leaves(tree), spec)
        try:
            dumped = m.treespec_dumps(spec)
        except NotImplementedError as err:
            dumped = normalize_message(str(err))
        results.append((repr(spec), repr(shapes).replace(lib.__name__, "LIB"), type(rebuilt).__name__,
                        [m.keystr(k) for k, _ in m.tree_leaves_with_path(tree)], dumped))
    assert results[1] == results[0]
