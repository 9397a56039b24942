"""DataPipes: torch.utils.data's deprecated composable datasets (`IterDataPipe`, `MapDataPipe`) and decorators.

NOTE [ What ember has of DataPipes ]
torch deprecated DataPipes (they moved to the torchdata project and froze), but scripts still import the
names from torch.utils.data and subclass them. ember gives what such a script uses: `IterDataPipe` (an
`IterableDataset` with torch's one-valid-iterator rule: a second `iter()` invalidates the first, with torch's
error), `MapDataPipe` (a `Dataset`), `DFIterDataPipe`, `DataChunk`, `functional_datapipe` (registers a
DataPipe class as a method of every DataPipe: `dp.twice()`), `non_deterministic` with
`guaranteed_datapipes_determinism`, and the validation decorators. Not here: torch's two dozen built-in
functional forms (`dp.map`, `dp.filter`, `dp.batch`, `dp.shuffle`, ...) and typed DataPipes
(`IterDataPipe[int]` with runtime type checks): a registered name is found, any other raises AttributeError
as in torch.
"""

import functools
import inspect

from .dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled", "argument_validation"]

_state = {"determinism": False, "runtime_validation": True}


def _datapipe_str(dp):
    args = ", ".join(f"{k}={v.__class__.__name__ if isinstance(v, (IterDataPipe, MapDataPipe)) else v}"
                     for k, v in vars(dp).items() if not k.startswith("_"))
    return f"{type(dp).__name__}({args})"


def _guard_iter(iter_fn):
    """Wrap a DataPipe's `__iter__`: the iterator it returns is invalidated by the next `iter()`."""
    @functools.wraps(iter_fn)
    def __iter__(self):
        my_id = self._valid_iterator_id = getattr(self, "_valid_iterator_id", 0) + 1
        source = iter_fn(self)

        def generate():
            for item in source:
                if self._valid_iterator_id != my_id:
                    raise RuntimeError(
                        "This iterator has been invalidated because another iterator has been created from the "
                        f"same IterDataPipe: {_datapipe_str(self)}\nThis may be caused by multiple references to "
                        "the same IterDataPipe. We recommend using `.fork()` if that is necessary.\nFor feedback "
                        "regarding this single iterator per IterDataPipe constraint, feel free to comment on this "
                        "issue: https://github.com/pytorch/data/issues/45.")
                yield item
        return generate()
    __iter__._guarded = True
    return __iter__


class IterDataPipe(IterableDataset):
    """An iterable-style DataPipe: subclass it and define `__iter__` (See NOTE [ What ember has of DataPipes ])."""

    functions = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        iter_fn = cls.__dict__.get("__iter__")
        if iter_fn is not None and not getattr(iter_fn, "_guarded", False):
            cls.__iter__ = _guard_iter(iter_fn)

    def __getattr__(self, attribute_name):
        if attribute_name in IterDataPipe.functions:
            return functools.partial(IterDataPipe.functions[attribute_name], self)
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute '{attribute_name}")

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")  # noqa: TRY002

        def class_function(cls, source_dp, *args, **kwargs):
            return cls(source_dp, *args, **kwargs)

        function = functools.partial(class_function, cls_to_register)
        functools.update_wrapper(wrapper=function, wrapped=cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = function

    def __repr__(self):
        return self.__class__.__qualname__

    def __str__(self):
        return self.__class__.__qualname__

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())

    def reset(self):
        """Reset the DataPipe's state between epochs (nothing by default)."""


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames (torch's tracing API for them is not in ember)."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(Dataset):
    """A map-style DataPipe: subclass it and define `__getitem__` and `__len__`."""

    functions = {}

    def __getattr__(self, attribute_name):
        if attribute_name in MapDataPipe.functions:
            return functools.partial(MapDataPipe.functions[attribute_name], self)
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute '{attribute_name}")

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")  # noqa: TRY002

        def class_function(cls, source_dp, *args, **kwargs):
            return cls(source_dp, *args, **kwargs)

        function = functools.partial(class_function, cls_to_register)
        functools.update_wrapper(wrapper=function, wrapped=cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = function

    def __repr__(self):
        return self.__class__.__qualname__

    def __str__(self):
        return self.__class__.__qualname__

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())


class DataChunk(list):
    """A list of items that DataPipes pass around as one batch."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


# ---- decorators --------------------------------------------------------------------------------------------

class functional_datapipe:
    """Class decorator registering a DataPipe class as a method of every DataPipe under `name`."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, non_deterministic):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif isinstance(cls, type) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       enable_df_api_tracing=self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


class guaranteed_datapipes_determinism:
    """While it lives (construction to `__exit__`), constructing a `non_deterministic` DataPipe raises."""

    def __init__(self):
        self.prev = _state["determinism"]
        _state["determinism"] = True

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _state["determinism"] = self.prev


class non_deterministic:
    """Mark an IterDataPipe class (or, given a function of its arguments, some of its instances) as
    non-deterministic, so that `guaranteed_datapipes_determinism` refuses it."""

    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _state["determinism"]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                            f"value, but {type(res)} is found")
        if _state["determinism"] and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                            "if that is acceptable for your application")
        return self.cls(*args, **kwargs)


class runtime_validation_disabled:
    """While it lives, `runtime_validation` checks nothing."""

    def __init__(self):
        self.prev = _state["runtime_validation"]
        _state["runtime_validation"] = False

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _state["runtime_validation"] = self.prev


def runtime_validation(f):
    """Decorate a DataPipe's `__iter__` to check each item against the DataPipe's `type`. ember has no typed
    DataPipes (NOTE [ What ember has of DataPipes ]), so, as for torch's untyped ones, iterating with the
    check enabled fails looking the type up; within `runtime_validation_disabled` items pass unchecked."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        if _state["runtime_validation"]:
            self.type  # noqa: B018 - an untyped DataPipe has none: torch's AttributeError
        yield from f(self)
    return wrapper


def argument_validation(f):
    """Decorate a function to check its DataPipe-typed arguments; with no typed DataPipes in ember, the
    arguments need only bind to the signature."""
    signature = inspect.signature(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return f(*args, **kwargs)
    return wrapper
