"""BatchNorm1d/2d/3d (running statistics, momentum=None cumulative average, track_running_stats, eval)."""

from ... import _dtypes
from ..._ops.creation import empty, ones, tensor, zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]



def _affine_parameters(module, affine, bias, shape, dtype):
    """Register `weight` (and `bias`, when asked) of `shape`, or None for both, as torch's norms do."""
    if affine:
        module.weight = Parameter(empty(shape, dtype=dtype))
        if bias:
            module.bias = Parameter(empty(shape, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, (num_features,), dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = tensor(0, dtype=_dtypes.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                eaf = 1.0 / float(self.num_batches_tracked)
            else:
                eaf = self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias, bn_training, eaf,
                            self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L)."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W)."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


# ---- lazy norms (num_features from the first input) ------------------------------------------------------------


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dtypes.int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            from ...autograd.grad_mode import no_grad

            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


# ---- SyncBatchNorm ---------------------------------------------------------------------------------------------


class SyncBatchNorm(_BatchNorm):
    """Batch normalization with statistics over all ranks of `process_group` (default: the world) in
    training mode; with no process group, one rank, or in eval mode it normalizes as BatchNorm does, over
    inputs of at least 2 dims. Unlike torch, CPU inputs are synchronized (NOTE [ SyncBatchNorm on the CPU ]
    in _sync_batchnorm.py)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        if input.dim() >= 2:  # (torch checks the dims first: BatchNorm's forward below does)
            self._check_non_zero_input_channels(input)
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        if bn_training and self.training and _distributed_initialized():
            # See NOTE [ SyncBatchNorm on the CPU ] (ember synchronizes CPU inputs; torch refuses them)
            from ... import distributed as dist

            group = self.process_group if self.process_group else dist.group.WORLD
            if dist.get_world_size(group) > 1:
                return self._forward_synchronized(input, group)
        return super().forward(input)

    def _forward_synchronized(self, input, group):
        from ._sync_batchnorm import sync_batch_norm

        self._check_input_dim(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            eaf = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        track = self.track_running_stats
        return sync_batch_norm(input, self.weight, self.bias, self.running_mean if track else None,
                               self.running_var if track else None, self.eps, eaf, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every BatchNorm*D of `module` replaced by a SyncBatchNorm sharing its parameters and statistics."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                from ...autograd.grad_mode import no_grad

                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output


def _distributed_initialized():
    import sys

    dist = sys.modules.get("ember.distributed")
    is_init = getattr(dist, "is_initialized", None) if dist is not None else None
    return bool(is_init and is_init())
