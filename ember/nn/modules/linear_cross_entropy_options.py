"""LinearCrossEntropyOptions: how linear_cross_entropy may chunk its work (NOTE [ linear_cross_entropy's
options ] in nn/functional/loss.py), validated as torch validates them."""

import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Options of the chunked linear_cross_entropy.

    Args:
        allow_retain_graph (bool): allow backward with retain_graph (default: False).
        batch_chunk_size (int, optional): rows per chunk (None: chosen automatically).
        chunking_method (str, optional): "auto" or "aspect_ratio[:factor]".
        acc_policy (str): "auto", "accurate", "balanced" or "compact".
        acc_dtype (dtype, optional): the accumulation dtype (a floating dtype, or None).
    """

    __module__ = "ember.nn.modules.linear_cross_entropy_options"

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        from ... import _dtypes

        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        supported = {_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64}
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")
