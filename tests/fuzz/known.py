"""The mismatches the fuzzer finds that are left, each with its reason.

An entry is (op id regex, mismatch kind regex, message regex, reason); `reason` returns the first entry's
reason that matches a mismatch, None for a mismatch nobody has looked at (the suite's bounded run fails).

State (issue 25, first pass): the classes below are OPEN - found, counted, not fixed yet; each entry says
what differs. The guarded classes are those with no entry: a hang, a NumPy exception reaching the user, a
NumPy RuntimeWarning escaping ember under `-W error` (one listed case aside). Fixing a class means
deleting its entry here and running `python -m tests.fuzz --cases 100000` to see it gone.
"""

import re

OPEN = "open: found by the fuzzer, not fixed yet (issue 25 part 2)"

KNOWN = [
    # -- values decided deliberately --
    (r"polygamma.*", r"values", r"",
     "polygamma below -1e6: ember gives NaN (NOTE [ polygamma far below zero ], ember/_ops/special.py) where "
     "torch's series gives large finite numbers, and inf at integer poles where torch's gives finite values "
     "for huge negative integers; the direct sum ember uses would take one step per unit"),
    # -- errors (engineer Z1, issue 25 part 2): what is left of the four error kinds, by where it comes from.
    # Fixed this pass and no longer listed: in-place writes into overlapping tensors checked first (NOTE
    # [ Overlap is checked first ]), scatter/gather/index_* checks in torch's order, the dtype-equality checks
    # of scatter/index/matmul/solve/lstsq/lerp/cdist/quantile ops, non-tensor inputs named in torch's
    # TypeError (NOTE [ Inputs that are not tensors ]), pooling argument types (NOTE [ Argument types in
    # torch's words ]), adaptive max pools of an empty batch.
    (r".*", r"exception message|exception class|returns where torch raises",
     r"torch(:| raised TypeError\()[^\n]*(\(\): argument '\w+'|received an invalid combination of arguments|"
     r"expected Tensor as element|object of type '\w+' has no len|unsupported operand type|"
     r"takes \d+ positional argument)",
     "argument types: torch's PythonArgParser checks every argument against the op's signatures "
     "(native_functions.yaml) before the op runs and names the argument, its position when passed "
     "positionally, and, for ops with several overloads, every overload; ember binds Python arguments without "
     "those tables (a str or None `dim` fails in Python's own words, a str `keepdim` is taken as true). The "
     "check has to be made where each function binds its arguments; doing it by wrapping every public function "
     "would cost a call on every op (the hot path), and the signature tables were not built this pass: "
     "pooling ops and non-tensor inputs are done (ember/_ops/_util.py int_tuple / check_bool, "
     "_dispatch.not_a_tensor)"),
    (r".*", r"exception message|exception class|raises where torch returns",
     r"ComplexHalf|complex32|last dimension with stride|last dimension of size",
     "half-precision complex: torch views a float16 pair as complex32 (ComplexHalf), a dtype ember does not "
     "have (NOTE [ complex32 ]), so view_as_complex / conj / the complex FFTs of float16 refuse in ember"),
    (r".*", r"exception message|exception class",
     r"ember: \"\w+\" not implemented for '\w+'\n torch: (?!\")|ember raised NotImplementedError",
     "order of checks: ember refuses a dtype its kernel lacks at the op's entry or at promotion (NOTE "
     "[ Accepted dtypes ]), before the shape, rank and argument checks that torch's meta functions and "
     "argument parser make first; moving each dtype check behind them is per op"),
    (r".*", r"exception message|exception class|returns where torch raises|raises where torch returns",
     r"tuple index out of range|list index out of range|Dimension specified as|has no dimensions|"
     r"mT is only supported|at least \d+ dimensions?|Dimension out of range|axis -?\d+ is out of bounds|"
     r"\d+D|-D |-dimensional|\d+-d|dimensions? (for|of) (input|tensor)|same number of dimensions|"
     r"must be a (matrix|vector)|weight should have at least|batch mode|for scalar but got|index \d+ out of range",
     "rank checks: 0-d and 1-d inputs (and dims out of range) reach another check first in ember, or none: "
     "each op's own rank checks are in torch's meta function or kernel, in an order that is per op (0-d "
     "dimension messages, conv/pool weight ranks, index_select of a scalar); found per op, not fixed this pass"),
    (r".*", r"exception message|exception class|returns where torch raises",
     r"The size of tensor a|The expanded size|Sizes of tensors must match|doesn't match the broadcast shape|"
     r"should contain \d+ elements|Expected (weight|bias) to be|expected bias to be|of same shape as "
     r"normalized_shape|Number of indices|Incompatible (matrix|shapes)|cannot be multiplied|must match|"
     r"not expandable|Mismatch of parameter numbers|prepend or append|numel: integer multiplication overflow",
     "shape checks: ember's composites broadcast (or expand) before their own shape check, so a wrong weight, "
     "bias, prepend or source shape reaches NumPy's broadcast first, and torch's op-specific words "
     "(batch/group/instance norm weights, conv bias, diff's prepend, bmm sizes) are left per op"),
    (r".*", r"exception message|returns where torch raises",
     r"mixed dtype|expected scalar type|same dtype|scalar type of|type \([\w.:]+\) and (bias|weight) type|"
     r"Type promoting not supported|requires the source and destination dtypes|Found dtype|"
     r"expected dtype|must be (a )?float tensor|only supports floating-point dtypes",
     "dtype-equality checks left: batch/layer norm's parameter dtypes, conv's input/weight/bias words, "
     "multi_dot, prelu, index_put, meshgrid, _softmax_backward_data, the amp ops; the families of scatter, "
     "index_*, addmm/addbmm/baddbmm/addmv, solve, lstsq, lerp, cdist, quantile, tensordot are done"),
    (r".*", r"exception message|exception class|returns where torch raises",
     r"single memory location",
     "overlap left: _amp_foreach_non_finite_check_and_unscale_ and the foreach ops whose torch kernel checks "
     "dtype or shape before its overlap check in another order than ember's per-tensor loop"),
    (r".*", r"returns where torch raises|raises where torch returns|exception message",
     r"_LinAlgError|singular|failed to converge|invers|lu_unpack|pivots",
     "linear algebra on singular, non-finite or malformed input: torch raises LinAlgError where LAPACK fails "
     "to converge on NaN (svd, eigh) and returns inf/NaN where ember's composite inverts or solves (slogdet, "
     "logdet, tensorinv, tensorsolve, eig, qr-based low-rank); lu_unpack reads out-of-range pivots unchecked "
     "in torch (ember refuses them)"),
    (r".*", r"raises where torch returns|returns where torch raises",
     r"not an error case|view size is not compatible|einsum|cannot reshape array|truth value|"
     r"appears multiple times|Subtraction, the|log_softmax|searchsorted|lu_cpu|batch_norm|NativeBatchNorm|"
     r"_backward\" not implemented|'grad' to have same size|index \d+ is out of bounds|is not iterable|"
     r"returned an invalid gradient|non-zero size",
     "torch returns (or raises) on a path ember takes otherwise: views of views where torch's view_copy keeps "
     "a stride ember's NumPy view loses, einsum broadcasting of repeated subscripts, ops torch runs on 0-size "
     "or integer inputs without its dtype check (searchsorted, log_softmax, lu, batch_norm of empty "
     "tensors), and 'not an error case': torch raised only with inputs requiring grad, which the harness's "
     "error replay (compare.assert_same_error) does not set"),
    (r"as_strided.*|empty_strided|unfold.*|arange|tile|view_copy|fft_r?fftfreq|expand_copy|dsplit",
     r"exception class|exception message|raises where torch returns", r"",
     "sizes, strides and lengths out of range: NumPy refuses first in its own words (ValueError: strides "
     "incompatible with the buffer, negative dimensions, maximum size) where torch's storage-size, "
     "negative-dimension and view checks come first; dsplit's sections broadcast where torch's split keeps "
     "the remainder; per op"),
    (r"nn\.functional\.(conv.*|max_pool.*|avg_pool.*|adaptive_.*|fractional_.*|group_norm|embedding|"
     r"batch_norm.*|instance_norm|layer_norm|ctc_loss|softshrink.*|cross_entropy|nll_loss.*|prelu)|interpolate.*",
     r"exception class|exception message|returns where torch raises|raises where torch returns", r"",
     "value checks of nn functionals: non-positive stride, groups or kernel, an output size that is too small "
     "or negative, num_groups, the softshrink lambda's range, a 1-d embedding weight, an empty CTC input, "
     "the fractional pools' sample checks: torch's shape-check functions (pool2d_shape_check, "
     "conv's check_shape_forward) run before the kernel in an order ember's functionals do not follow yet"),
    (r"linalg\.(eigvalsh.*|cond.*|eig|lstsq.*|norm|tensorinv|tensorsolve|qr_q|solve_triangular)|logdet|qr|"
     r"svd_lowrank|pca_lowrank|lobpcg|corrcoef|cov|addmv|einsum.*|tensordot|cross",
     r"exception class|exception message|returns where torch raises|raises where torch returns", r"",
     "composite linear algebra: ember builds these on other ops, whose words and checks surface (eigvalsh "
     "says eigvalsh where torch's says eigh, qr/svd_lowrank solve a non-square system torch never forms, "
     "cond names its order), and torch's own checks (addmv's ranks, cov's negative aweights, tensorinv's "
     "ind, einsum's subscript sizes, tensordot's dims) are missing: per op"),
    (r"_amp_.*|addcdiv|index_fill_tensor|index_select|kthvalue|repeat_interleave|split_with_sizes_copy",
     r"exception class|exception message|returns where torch raises", r"",
     "one check each: the amp ops' dtype and size checks, addcdiv's integer-division error class, "
     "index_fill's value range for uint8, index_select / kthvalue of a scalar or an empty dim, the words "
     "of repeat_interleave's and split_with_sizes' negative sizes"),
    (r"cond", r"returns where torch raises", r"torch\._dynamo' has no attribute 'utils'",
     "the oracle, not ember: torch.cond reaches torch._dynamo.utils, which a process that never imported "
     "torch._dynamo lacks (a standalone `python -m tests.fuzz` run; inside the test suite another test has "
     "imported it and torch.cond returns)"),
    # -- open classes, most frequent first (3000 cases, seed 0) --
    (r".*", r"stride", r"",
     f"{OPEN}: the result of an op on an expanded (stride-0) or stepped input: ember takes NumPy's layout, "
     "torch's TensorIterator sorts dims by the inputs' strides (mostly in-place/pointwise ops, scatters)"),
    (r".*", r"values", r"",
     f"{OPEN}: NaN/inf placement at special values (pools, gelu, logit eps, fft of inf, angle of ints, lcm "
     "sign) and float16/float32 kernels computed at another precision"),
    (r".*", r"gradient", r"",
     f"{OPEN}: gradients at NaN/inf/ties (min, minimum, scatter_reduce mean, relu6) and of 0-size or "
     "expanded inputs (trapezoid, as_strided, LSTM)"),
    (r"cumulative_trapezoid", r"numpy warning", r"invalid value encountered in add",
     f"{OPEN}: the float16 backward of cumulative_trapezoid runs NumPy outside the dispatcher's retry "
     "(NOTE [ Quiet NumPy ]): inf - inf warns under -W error"),
]


def reason(op, kind, message):
    for o, k, m, why in KNOWN:
        if re.fullmatch(o, op) and re.fullmatch(k, kind) and re.search(m, message):
            return why
    return None
