"""InstanceNorm1d/2d/3d and their lazy forms (torch.nn.modules.instancenorm)."""

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _nd = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise ValueError(f"expected {nd + 1}D or {nd + 2}D input (got {input.dim()}D input)")
        feature_dim = input.dim() - (nd + 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            import warnings

            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.dim() == nd + 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum if
                              self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    """(torch's lazy instance norms take _LazyNormBase's defaults: affine and track_running_stats True.)"""


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """An InstanceNorm1d whose num_features is inferred from the first input (its dim 1)."""

    cls_to_become = InstanceNorm1d
    _nd = 1


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """An InstanceNorm2d whose num_features is inferred from the first input (its dim 1)."""

    cls_to_become = InstanceNorm2d
    _nd = 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """An InstanceNorm3d whose num_features is inferred from the first input (its dim 1)."""

    cls_to_become = InstanceNorm3d
    _nd = 3
