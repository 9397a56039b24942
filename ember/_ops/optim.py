"""Optimizer steps as ops: one op per optimizer step, over lists of tensors (torch's `_fused_adam_` shape).

NOTE [ Optimizer steps are ops over lists ]
An optimizer's whole update for one parameter group is one dispatched op, so a mode on the stack (a tracer,
the profiler) sees the step as torch's fused/foreach kernels show it. The op's inputs are its lists of tensors
flattened into one tuple (params, grads, then each state list), and its first param is the tuple of the
lists' lengths (`sizes`); the hyperparameters follow as Python numbers. `step_op` below turns a kernel
written over lists of arrays into such an op; `ember/optim/optimizer.py` (`_run_step`) flattens the lists,
dispatches and bumps the version counters.

The op mutates its inputs in place (the parameters and state tensors: torch's `Tensor(a!)` arguments) and
returns the fresh state it had to create (SGD's first momentum buffers), else nothing (an empty tuple). The
kernels keep the NumPy update code that matches torch's single-tensor ("for-loop") implementations step for
step: in-place ufuncs with `out=`, Python scalars applied in the arrays' dtype (NumPy's weak scalars, as torch's
scalar arguments), torch's order of operations (NOTE [ How optimizers update parameters ] in optimizer.py).
Complex parameters are updated through `view_as_real` views, as torch does.
"""

import inspect

import numpy as np

from .._dispatch import OTHER, defop
from .._meta import MetaArray, like_strides, meta_array
from .._native import ops as _native

_ndarray = np.ndarray

__all__ = []


def step_op(name, fresh=None):
    """Declare a step op from `kernel(*lists_of_arrays, *hyper)`; the op's kernel unflattens its arguments.
    `fresh(lists, hyper)`: the meta payloads of the state the step creates (default: none)."""
    def deco(fn):
        def kernel(*args):
            k = 0
            while type(args[k]) is _ndarray:  # the inputs' arrays, then the sizes tuple
                k += 1
            lists, i = [], 0
            for n in args[k]:
                lists.append(args[i:i + n])
                i += n
            # a step writes its tensors in place: a NumPy warning a user's filter makes an error must not stop
            # it halfway, or the dispatcher's quiet rerun (NOTE [ Quiet NumPy ]) would apply the update twice
            with np.errstate(all="ignore"):
                return fn(*lists, *args[k + 1:])
        kernel.__name__ = kernel.__qualname__ = fn.__name__
        op = defop(name, None, OTHER)(kernel)
        op.meta_(_step_meta(fn, fresh))
        return op
    return deco


def _step_meta(fn, fresh):
    """The meta rule of a step op: the in-place updates need nothing computed, except the step counters that
    live on the CPU (torch keeps 'step' a CPU scalar beside meta parameters, and counts it on)."""
    names = list(inspect.signature(fn).parameters)

    def rule(*args):
        k = next(i for i, a in enumerate(args) if type(a) is tuple)
        lists, i = {}, 0
        for name, n in zip(names, args[k]):
            lists[name] = args[i:i + n]
            i += n
        hyper = dict(zip(names[len(args[k]):], args[k + 1:]))
        for t in lists.get("steps", ()):
            if type(t._data) is _ndarray:
                t._data += 1
        return fresh(lists, hyper) if fresh is not None else ()
    return rule


def _sgd_fresh(lists, hyper):  # the first step's momentum buffers: clones of the gradients
    if hyper["momentum"] == 0:
        return ()
    return tuple(meta_array(tuple(g.shape), g._data.dtype, like_strides(g))
                 for g, has in zip(lists["grads"], hyper["has_buf"]) if not has)


def _asgd_fresh(lists, hyper):  # the step reads eta and mu as numbers
    if any(type(t._data) is MetaArray for t in lists["etas"] + lists["mus"]):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    return ()


# ---- the arithmetic torch's optimizers share, evaluated as torch's kernels evaluate it ----------------------


def as_real(a):
    """torch.view_as_real for complex arrays (a view with a trailing dim of 2); real arrays unchanged."""
    if a.dtype.kind != "c":
        return a
    return a.reshape(a.shape + (1,)).view(a.real.dtype)


# NOTE [ Half-precision optimizer arithmetic ]
# For float16/bfloat16 torch's pointwise kernels compute in float ("opmath") and round once: addcmul_ is
# `float(self) + value * float(t1) * float(t2)`, addcdiv_ and lerp_ likewise, and a Python scalar stays a
# float (not rounded to half) in `mul_(alpha)` / `add_(eps)`. NumPy would round every intermediate (and the
# scalar) to half, so for these dtypes the helpers below compute in float32 and write back once.
_HALF = frozenset({"float16", "bfloat16"})


def _is_half(a):
    d = a.dtype  # (float16 or bfloat16; `dtype.name` costs microseconds, NOTE [ Telling bfloat16 apart ])
    return d.itemsize == 2 and d.kind in "fV"


def _f32(a):
    return a.astype(np.float32) if _is_half(a) else a


def mul_(a, s):
    """a.mul_(s) with a Python scalar."""
    if _is_half(a):
        a[...] = np.multiply(a, np.float32(s), dtype=np.float32)
    else:
        a *= s


def add_(a, s):
    """a.add_(s) with a Python scalar."""
    if _is_half(a):
        a[...] = np.add(a, np.float32(s), dtype=np.float32)
    else:
        a += s


def add_tensor_(a, b, alpha):
    """a.add_(b, alpha=alpha)."""
    if _is_half(a):
        a[...] = np.float32(alpha) * _f32(b) + a.astype(np.float32)
    else:
        tmp = np.multiply(b, alpha)
        a += tmp


def lerp_(a, end, weight):
    """a.lerp_(end, weight) with a scalar weight, in torch's formula (weight applied in a's dtype)."""
    if _is_half(a):
        w, a32, e32 = np.float32(weight), a.astype(np.float32), _f32(end)
        d = e32 - a32
        a[...] = a32 + w * d if abs(w) < 0.5 else e32 - d * (np.float32(1) - w)
        return
    d = np.subtract(end, a)
    w = a.dtype.type(weight) if a.dtype.kind == "f" else weight
    if abs(w) < 0.5:
        d *= w
        a += d
    else:
        d *= (a.dtype.type(1) - w) if a.dtype.kind == "f" else 1 - w
        np.subtract(end, d, out=a)


def addcmul_(a, t1, t2, value):
    """a.addcmul_(t1, t2, value=value): a + value * t1 * t2, evaluated left to right as torch's kernel."""
    if _is_half(a):
        a[...] = np.float32(value) * _f32(t1) * _f32(t2) + a.astype(np.float32)
        return
    if value == 1:
        tmp = np.multiply(t1, t2)
    else:
        tmp = np.multiply(t1, value)
        tmp *= t2
    a += tmp


def addcdiv_(a, t1, t2, value):
    """a.addcdiv_(t1, t2, value=value): a + value * t1 / t2, evaluated left to right as torch's kernel."""
    if _is_half(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            a[...] = np.float32(value) * _f32(t1) / _f32(t2) + a.astype(np.float32)
        return
    if value == 1:
        tmp = np.divide(t1, t2)
    else:
        tmp = np.multiply(t1, value)
        tmp /= t2
    a += tmp


def add_scaled(a, b, alpha):
    """a.add(b, alpha=alpha) as a new array: a + alpha * b."""
    if alpha == 1:
        return np.add(a, b)
    tmp = np.multiply(b, alpha)
    tmp += a
    return tmp


def _grad(g, p, maximize, weight_decay):
    """The gradient an update uses: negated if maximize, plus L2 weight decay (torch's order)."""
    if maximize:
        g = np.negative(g)
    if weight_decay != 0:
        g = add_scaled(g, p, weight_decay)
    return g


# ---- the steps ------------------------------------------------------------------------------------------------


@step_op("_sgd_step_", _sgd_fresh)
def sgd_step(params, grads, bufs, has_buf, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Returns the new momentum buffers, one per False in `has_buf` (torch's first-step clone of the grad)."""
    new, j = [], 0
    for i, p in enumerate(params):
        if p.size >= _native.MIN_SIZE and (momentum == 0 or has_buf[i]) and _native.sgd(
                p, grads[i], bufs[j] if momentum != 0 else None, True, weight_decay, momentum, lr, dampening,
                nesterov, maximize):
            j += momentum != 0
            continue
        g = grads[i]  # (`_grad` inlined: SGD's per-parameter overhead is what a step of many small params costs)
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            g = add_scaled(g, p, weight_decay)
        if momentum != 0:
            if not has_buf[i]:
                buf = np.array(g, copy=True)
                new.append(buf)
            else:
                buf = bufs[j]
                j += 1
                buf *= momentum
                if dampening == 0:
                    buf += g
                else:
                    tmp = np.multiply(g, 1 - dampening)
                    buf += tmp
            g = add_scaled(g, buf, momentum) if nesterov else buf
        tmp = np.multiply(g, -lr)
        p += tmp
    return tuple(new)


@step_op("_adam_step_")
def adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, amsgrad, beta1, beta2, lr,
              weight_decay, eps, maximize, decoupled_weight_decay):
    # float32 parameters: one native loop over all of them (NOTE [ One Adam loop over all parameters ] in
    # ember/_native/optim.c); the others, one at a time
    for i in _native.adam_many(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None,
                               steps, beta1, beta2, lr, weight_decay, decoupled_weight_decay, eps, maximize):
        p = params[i]
        step_t = steps[i]
        step_t += 1
        if p.size >= _native.MIN_SIZE and _native.adam(
                as_real(p), as_real(grads[i]), as_real(exp_avgs[i]), as_real(exp_avg_sqs[i]),
                as_real(max_exp_avg_sqs[i]) if amsgrad else None, beta1, beta2, lr, weight_decay,
                decoupled_weight_decay, eps, lr / (1 - beta1 ** float(step_t)), (1 - beta2 ** float(step_t)) ** 0.5,
                maximize):
            continue
        g = np.negative(grads[i]) if maximize else grads[i]
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = add_scaled(g, p, weight_decay)
        exp_avg, exp_avg_sq = as_real(exp_avgs[i]), as_real(exp_avg_sqs[i])
        pr, g = as_real(p), as_real(g)
        lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        addcmul_(exp_avg_sq, g, g, 1 - beta2)
        step = float(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            max_sq = as_real(max_exp_avg_sqs[i])
            np.maximum(max_sq, exp_avg_sq, out=max_sq)
            denom = np.sqrt(max_sq)
        else:
            denom = np.sqrt(exp_avg_sq)
        denom /= bias_correction2_sqrt
        denom += eps
        addcdiv_(pr, exp_avg, denom, -step_size)
    return ()


@step_op("_adamax_step_")
def adamax_step(params, grads, exp_avgs, exp_infs, steps, eps, beta1, beta2, lr, weight_decay, maximize):
    for i, p in enumerate(params):
        g = _grad(grads[i], p, maximize, 0)
        step_t = steps[i]
        step_t += 1
        if weight_decay != 0:
            g = add_scaled(g, p, weight_decay)
        pr, g = as_real(p), as_real(g)
        exp_avg, exp_inf = as_real(exp_avgs[i]), as_real(exp_infs[i])
        lerp_(exp_avg, g, 1 - beta1)
        exp_inf *= beta2
        norm = np.abs(g)
        norm += eps
        np.maximum(exp_inf, norm, out=exp_inf)
        clr = lr / (1 - beta1 ** float(step_t))
        addcdiv_(pr, exp_avg, exp_inf, -clr)
    return ()


@step_op("_nadam_step_")
def nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, beta1, beta2, lr, weight_decay,
               momentum_decay, eps, decoupled_weight_decay, maximize):
    for i, param in enumerate(params):
        p, g = as_real(param), grads[i]
        g = as_real(np.negative(g) if maximize else g)
        exp_avg, exp_avg_sq = as_real(exp_avgs[i]), as_real(exp_avg_sqs[i])
        mu_product = mu_products[i]
        step_t = steps[i]
        step_t += 1
        step = float(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = add_scaled(g, p, weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        addcmul_(exp_avg_sq, g, g, 1 - beta2)
        denom = np.divide(exp_avg_sq, bias_correction2)
        np.sqrt(denom, out=denom)
        mu_product_value = float(mu_product)
        mu_product_next = mu_product_value * mu_next
        denom += eps
        addcdiv_(p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product_value))
        addcdiv_(p, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
    return ()


@step_op("_radam_step_")
def radam_step(params, grads, exp_avgs, exp_avg_sqs, steps, beta1, beta2, lr, weight_decay, eps,
               decoupled_weight_decay, maximize):
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        p, g = as_real(param), grads[i]
        g = as_real(np.negative(g) if maximize else g)
        exp_avg, exp_avg_sq = as_real(exp_avgs[i]), as_real(exp_avg_sqs[i])
        step_t = steps[i]
        step_t += 1
        step = float(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = add_scaled(g, p, weight_decay)
        lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq *= beta2
        addcmul_(exp_avg_sq, g, g, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = np.divide(exp_avg, bias_correction1)
        update *= lr
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            adaptive = np.sqrt(exp_avg_sq)
            adaptive += eps
            np.reciprocal(adaptive, out=adaptive)  # torch's scalar / tensor is tensor.reciprocal() * scalar
            adaptive *= bias_correction2 ** 0.5
            update *= adaptive
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        p -= update
    return ()


@step_op("_adagrad_step_")
def adagrad_step(params, grads, state_sums, steps, lr, weight_decay, lr_decay, eps, maximize):
    for p, g, state_sum, step_t in zip(params, grads, state_sums, steps):
        step_t += 1
        step = float(step_t)
        g = _grad(g, p, maximize, weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        p, g, s = as_real(p), as_real(g), as_real(state_sum)
        addcmul_(s, g, g, 1)
        std = np.sqrt(s)
        std += eps
        addcdiv_(p, g, std, -clr)
    return ()


@step_op("_adadelta_step_")
def adadelta_step(params, grads, square_avgs, acc_deltas, steps, lr, rho, eps, weight_decay, maximize):
    for p, g, square_avg, acc_delta, step_t in zip(params, grads, square_avgs, acc_deltas, steps):
        step_t += 1
        g = _grad(g, p, maximize, weight_decay)
        p, g, v, u = as_real(p), as_real(g), as_real(square_avg), as_real(acc_delta)
        v *= rho
        addcmul_(v, g, g, 1 - rho)
        std = np.add(v, eps)
        np.sqrt(std, out=std)
        delta = np.add(u, eps)
        np.sqrt(delta, out=delta)
        delta /= std
        delta *= g
        u *= rho
        addcmul_(u, delta, delta, 1 - rho)
        delta *= -lr
        p += delta
    return ()


@step_op("_rmsprop_step_")
def rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, lr, alpha, eps, weight_decay,
                 momentum, centered, maximize):
    for i, p in enumerate(params):
        step_t = steps[i]
        step_t += 1
        g = _grad(grads[i], p, maximize, weight_decay)
        p, g, v = as_real(p), as_real(g), as_real(square_avgs[i])
        mul_(v, alpha)
        addcmul_(v, g, g, 1 - alpha)
        if centered:
            grad_avg = as_real(grad_avgs[i])
            lerp_(grad_avg, g, 1 - alpha)
            avg = v.copy()
            addcmul_(avg, grad_avg, grad_avg, -1)
            np.sqrt(avg, out=avg)
        else:
            avg = np.sqrt(v)
        add_(avg, eps)
        if momentum > 0:
            buf = as_real(momentum_buffers[i])
            mul_(buf, momentum)
            addcdiv_(buf, g, avg, 1)
            add_tensor_(p, buf, -lr)
        else:
            addcdiv_(p, g, avg, -lr)
    return ()


@step_op("_rprop_step_")
def rprop_step(params, grads, prevs, step_sizes, steps, step_size_min, step_size_max, etaminus, etaplus,
               maximize):
    for i, param in enumerate(params):
        step_t = steps[i]
        step_t += 1
        g = as_real(_grad(grads[i], param, maximize, 0))
        p, prev, step_size = as_real(param), as_real(prevs[i]), as_real(step_sizes[i])
        sign = np.multiply(g, prev)
        np.sign(sign, out=sign)
        sign[sign != sign] = 0  # (torch's sign of NaN is 0, NumPy's NaN: an infinite grad times a zero prev)
        sign[sign > 0] = etaplus
        sign[sign < 0] = etaminus
        sign[sign == 0] = 1
        step_size *= sign
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        g = g.copy()
        g[sign == etaminus] = 0
        gs = np.sign(g)
        gs[gs != gs] = 0
        addcmul_(p, gs, step_size, -1)
        np.copyto(prev, g)
    return ()


@step_op("_asgd_step_", _asgd_fresh)
def asgd_step(params, grads, axs, mus, etas, steps, lambd, lr, t0, alpha, weight_decay, maximize):
    for i, param in enumerate(params):
        mu, eta = mus[i], etas[i]
        step_t = steps[i]
        step_t += 1
        g = _grad(grads[i], param, maximize, weight_decay)
        p, g, ax = as_real(param), as_real(g), as_real(axs[i])
        eta_value = float(eta)
        p *= 1 - lambd * eta_value
        tmp = np.multiply(g, -eta_value)
        p += tmp
        if float(mu) != 1:
            tmp = np.subtract(p, ax)
            tmp *= mu
            ax += tmp
        else:
            np.copyto(ax, p)
        step = float(step_t)
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - t0)
    return ()


@step_op("_swa_average_")
def swa_average(averaged, current, n):
    """SWA's running mean over floating tensors: a += (c - a) / (n + 1), torch's per-tensor CPU order."""
    for a, c in zip(averaged, current):
        diff = np.subtract(c, a)
        diff /= n + 1
        a += diff
    return ()


@step_op("_lbfgs_add_grad_")
def lbfgs_add_grad(params, update, step_size):
    """LBFGS's `p += step_size * update[slice of p]`, `update` (a list of one) the flat search direction."""
    update, offset = update[0], 0
    for p in params:
        numel = p.size
        tmp = np.multiply(update[offset:offset + numel].reshape(p.shape), step_size)
        p += tmp
        offset += numel
    return ()
