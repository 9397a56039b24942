"""Weight averaging: AveragedModel (SWA and EMA), SWALR, update_bn (torch.optim.swa_utils)."""

import itertools
import math
import warnings
from copy import deepcopy

from .. import _dtypes
from .._ops import optim as _steps
from .._ops.creation import tensor as _tensor
from .._ops.foreach import _foreach_lerp_
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import _run_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place exponential moving average over lists of tensors: ema <- lerp(ema, current, 1 - decay)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            _foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors: avg <- avg + (current - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            _foreach_lerp_(averaged_param_list, current_param_list, float(1 / (num_averaged + 1)))
        else:
            for a, c in zip(averaged_param_list, current_param_list):
                a.copy_(a + (c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """ema_update(ema, current, n) -> decay * ema + (1 - decay) * current."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """swa_update(avg, current, n) -> avg + (current - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    r"""A copy of `model` whose parameters are the running average (SWA, default) or another average
    (``avg_fn`` per tensor, or ``multi_avg_fn`` over lists, e.g. `get_ema_multi_avg_fn`) of `model`'s,
    updated by `update_parameters`. `n_averaged` (a long buffer) counts the updates.

    Args:
        model (Module): the model to average.
        device: accepted for torch compatibility (ember has one device).
        avg_fn, multi_avg_fn (callable, optional): the averaging function (at most one of them).
        use_buffers (bool): average the buffers too, instead of copying them (default: False).

    Example:
        >>> swa_model = AveragedModel(model)
        >>> swa_model.update_parameters(model)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        self.register_buffer("n_averaged", _tensor(0, dtype=_dtypes.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model):
        """Fold `model`'s current parameters (and buffers if use_buffers) into the average."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        self_detached, model_detached = [], []
        n = int(self.n_averaged.item())
        for p_averaged, p_model in zip(self_param, model_param):
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model.detach())
            if n == 0:
                p_averaged.detach().copy_(p_model.detach())
        if n > 0:
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(self_detached, model_detached, self.n_averaged)
            elif self.avg_fn is None:
                floats = [(a, c) for a, c in zip(self_detached, model_detached)
                          if a.is_floating_point() or a.is_complex()]  # torch's per-tensor SWA on the CPU
                _run_step(_steps.swa_average, ([a for a, _ in floats], [c for _, c in floats]), (n,), (1, 0))
                for a, c in zip(self_detached, model_detached):
                    if not (a.is_floating_point() or a.is_complex()):
                        a.copy_(a + (c - a) / (self.n_averaged + 1))
            else:
                for a, c in zip(self_detached, model_detached):
                    a.copy_(self.avg_fn(a, c, self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach())
        self.n_averaged.add_(1)


def _batchnorm_base():
    try:
        from ..nn.modules.batchnorm import _BatchNorm
    except ImportError:  # ember.nn without batch norm layers: then no module can be one
        return None
    return _BatchNorm


@no_grad()
def update_bn(loader, model, device=None):
    r"""Recompute the BatchNorm running statistics of `model` with one pass over `loader` (a cumulative
    average: momentum=None), as needed after weight averaging. Each batch (or its first element, for
    list/tuple batches) is fed to the model in train mode; the mode is restored afterwards.

    Example:
        >>> update_bn(loader, swa_model)
    """
    bn = _batchnorm_base()
    momenta = {}
    for module in model.modules():
        if bn is not None and isinstance(module, bn):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneal each group's lr to `swa_lr` over `anneal_epochs` epochs ('cos' or 'linear'), then hold it.

    Example:
        >>> swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5)
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """The state, without the optimizer and the anneal function (restored from its name)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
