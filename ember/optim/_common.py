"""The generic parts of torch's optimizers, written once: argument checks with torch's messages, the closure,
and collecting each group's parameters, gradients and (lazily created) state.

Every optimizer module keeps what is its own: the update rule in the docstring, the constructor with torch's
signature, how a parameter's state starts (`_new_state`) and the functional update (`adam(...)`, ...). Its
`step` then reads::

    loss = _run_closure(closure)
    for group in self.param_groups:
        params, grads, (exp_avgs, state_steps) = _collect(self, group, ("exp_avg", "step"))
        adam(params, grads, exp_avgs, state_steps, lr=group["lr"], ...)
    return loss

The options a group gains when a pickled or older state is loaded are declared per class as
`_defaults_for_setstate` and filled in by `Optimizer.__setstate__`.
"""

from ..autograd.grad_mode import enable_grad
from .optimizer import _check_lr, _new_scalar, _zeros_state

__all__ = []


# the `_defaults_for_setstate` most optimizers share: the flags torch added to every optimizer over time
_FLAG_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))


def _run_closure(closure):
    """The loss of `closure()` evaluated with grad mode on (step itself runs with it off), or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _collect(optimizer, group, names):
    """The parameters of `group` that have a gradient, their gradients, and for each of `names` the list of that
    state entry per parameter (an empty list for a name given as None: state the options leave unused).

    A parameter seen for the first time gets its state from ``optimizer._new_state(group, p)`` (a dict, in
    torch's key order), as torch's `_init_group` creates it lazily at the first step.
    """
    params, grads = [], []
    lists = [[] for _ in names]
    used = [(name, lst) for name, lst in zip(names, lists) if name is not None]
    all_state = optimizer.state
    for p in group["params"]:
        g = p.grad
        if g is None:
            continue
        params.append(p)
        grads.append(g)
        state = all_state[p]
        if len(state) == 0:
            state.update(optimizer._new_state(group, p))
        for name, lst in used:
            lst.append(state[name])
    return params, grads, lists


def _step_and_zeros(p, *names):
    """A fresh state: 'step' (a 0-d scalar tensor at 0) then a zero buffer shaped as `p` for each of `names`."""
    state = {"step": _new_scalar(0.0)}
    for name in names:
        state[name] = _zeros_state(p)
    return state


# ---- argument checks (torch's conditions and messages, checked in torch's order) ----------------------------


def _check_nonneg(**values):
    """ValueError("Invalid <name> value: <value>") for the first value (in argument order) that is not >= 0
    (NaN included, as torch's ``not 0.0 <= value``)."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_adam_args(lr, betas, eps, weight_decay):
    """The checks Adam, Adamax, NAdam and RAdam share: lr, eps, betas, then weight_decay."""
    _check_lr(lr)
    _check_nonneg(epsilon=eps)
    _check_betas(betas)
    _check_nonneg(weight_decay=weight_decay)
