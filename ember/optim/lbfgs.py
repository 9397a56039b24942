"""L-BFGS with an optional strong-Wolfe line search, on the parameters flattened into one vector.

NOTE [ LBFGS scalars ]
torch's L-BFGS mixes Python floats with 0-d float32 tensors (dot products, `ro`, `H_diag`, often the step
`t`), and which one a value is decides the precision of the arithmetic that follows. Here the vectors are
float32 NumPy arrays and the 0-d tensors are NumPy float32 scalars, which combine with Python floats exactly
as torch's 0-d tensors do (the Python number is cast to float32), so the iterates and line-search decisions
follow torch's. The state is stored as ember tensors (vectors and 0-d tensors), named as torch names them.
This host-side algebra reads the gradients with `Tensor.numpy()`, as torch's reads them with `.item()` and
data-dependent branches; the parameters themselves change only through ops (`_lbfgs_add_grad_`,
`_foreach_copy_`), so a mode on the dispatcher sees every update.
"""

import numpy as np

from .. import _dtypes
from .._ops import optim as _steps
from .._ops.foreach import _foreach_copy_
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import enable_grad
from .optimizer import Optimizer, _check_lr, _run_step, _to_scalar, _use_grad_for_differentiable

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to `bounds` (minFunc's polyinterp)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d for a step t meeting the strong Wolfe conditions; returns (f, g, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:  # bracketing phase
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    return _zoom(obj_func, x, d, f, gtd, c1, c2, tolerance_change, max_ls, d_norm, done, ls_iter, ls_func_evals,
                 bracket, bracket_f, bracket_g, bracket_gtd if not done and ls_iter != max_ls else None)


def _zoom(obj_func, x, d, f, gtd, c1, c2, tolerance_change, max_ls, d_norm, done, ls_iter, ls_func_evals,
          bracket, bracket_f, bracket_g, bracket_gtd):
    """The zoom phase of `_strong_wolfe`: shrink the bracket until the conditions hold."""
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _to_state(x):
    """NumPy arrays and scalars as ember tensors (NOTE [ LBFGS scalars ])."""
    if isinstance(x, (np.ndarray, np.generic)):
        return _wrap(np.asarray(x))
    if isinstance(x, list):
        return [_to_state(v) for v in x]
    return x


def _from_state(x):
    if isinstance(x, Tensor):
        return x.detach().numpy()[()]  # a vector as its array, a 0-d tensor as a NumPy scalar (NOTE [ LBFGS scalars ])
    if isinstance(x, list):
        return [_from_state(v) for v in x]
    return x


class LBFGS(Optimizer):
    r"""Implements the L-BFGS algorithm (heavily inspired by minFunc).

    Each `step(closure)` runs up to ``max_iter`` iterations: the direction is the two-loop recursion over the
    last ``history_size`` curvature pairs (s = t d, y = g_new - g_old), scaled by H_diag = y.s / y.y; the step
    length is ``lr`` (the first iteration: min(1, 1 / |g|_1) * lr), or found by a strong-Wolfe line search.
    It needs a closure, supports a single parameter group, and only real parameters.

    Args:
        params (iterable): parameters to optimize.
        lr (float, optional): learning rate (default: 1).
        max_iter (int, optional): maximal number of iterations per optimization step (default: 20).
        max_eval (int, optional): maximal number of function evaluations per step (default: max_iter * 1.25).
        tolerance_grad (float, optional): termination tolerance on first order optimality (default: 1e-7).
        tolerance_change (float, optional): termination tolerance on function value/parameter changes
            (default: 1e-9).
        history_size (int, optional): update history size (default: 100).
        line_search_fn (str, optional): either 'strong_wolfe' or None (default: None).

    Example:
        >>> optimizer = ember.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = loss_fn(model(input), target)
        ...     loss.backward()
        ...     return loss
        >>> optimizer.step(closure)
    """

    __module__ = "ember.optim.lbfgs"

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        views = [np.zeros(p.numel(), _dtypes.to_numpy(p.dtype)) if p.grad is None
                 else p.grad.detach().numpy().reshape(-1) for p in self._params]
        return np.concatenate(views)

    def _add_grad(self, step_size, update):
        _run_step(_steps.lbfgs_add_grad, (self._params, [_wrap(update)]), (step_size,), (1, 0))

    def _clone_param(self):
        return [p.detach().clone() for p in self._params]

    def _set_param(self, params_data):
        _foreach_copy_(self._params, params_data)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @_use_grad_for_differentiable
    def step(self, closure):
        """Perform a single optimization step. closure (required): reevaluates the model and returns the loss."""
        def grad_closure():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = grad_closure()
        loss = float(orig_loss)
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= group["tolerance_grad"]:
            return orig_loss
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            self._iterate(group, state, grad_closure, loss, flat_grad)
        return orig_loss

    def _iterate(self, group, state, closure, loss, flat_grad):
        lr, max_iter, max_eval = _to_scalar(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        s = {k: _from_state(state.get(k)) for k in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                                                      "prev_flat_grad", "prev_loss", "al")}
        current_evals, n_iter = 1, 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            self._direction(s, state["n_iter"] == 1, flat_grad, group["history_size"])
            if s["prev_flat_grad"] is None:
                s["prev_flat_grad"] = flat_grad.copy()
            else:
                np.copyto(s["prev_flat_grad"], flat_grad)
            s["prev_loss"] = loss
            d = s["d"]
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                s["t"] = t
                break
            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            s["t"] = t
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or np.abs(d * t).max() <= tolerance_change or abs(loss - s["prev_loss"]) < tolerance_change):
                break
        for k in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss"):
            state[k] = _to_state(s[k])
        if s["al"] is not None:
            state["al"] = _to_state(s["al"])

    @staticmethod
    def _direction(s, first, flat_grad, history_size):
        """The L-BFGS two-loop recursion: the new search direction s['d'] from the curvature history."""
        if first:
            s["d"] = np.negative(flat_grad)
            s["old_dirs"], s["old_stps"], s["ro"], s["H_diag"] = [], [], [], 1
            return
        old_dirs, old_stps, ro = s["old_dirs"], s["old_stps"], s["ro"]
        y = np.subtract(flat_grad, s["prev_flat_grad"])
        st = np.multiply(s["d"], s["t"])
        ys = y.dot(st)
        if ys > 1e-10:
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(st)
            ro.append(1.0 / ys)
            s["H_diag"] = ys / y.dot(y)
        if s["al"] is None:
            s["al"] = [None] * history_size
        al = s["al"]
        q = np.negative(flat_grad)
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q += np.multiply(old_dirs[i], -al[i])
        s["d"] = r = np.multiply(q, s["H_diag"])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r += np.multiply(old_stps[i], al[i] - be_i)
