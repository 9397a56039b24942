"""torch 2.13.0+cpu's argument-parser signatures (generated: do not edit).

Written by tools/gen_arg_signatures.py from torch's native_functions.yaml through torch's own binding
generator; read by ember/_argparse.py on error paths only. Keys: the namespace (`torch`, `Tensor` for
methods, `nn`, `fft`, `linalg`, `special`), then the name torch's parser reports.
"""

# ruff: noqa: E501
# fmt: off
SIGNATURES = {'Tensor': {'__and__': ('__and__(Tensor other)', '__and__(Scalar other)'),
            '__iand__': ('__iand__(Tensor other)', '__iand__(Scalar other)'),
            '__ilshift__': ('__ilshift__(Tensor other)', '__ilshift__(Scalar other)'),
            '__ior__': ('__ior__(Tensor other)', '__ior__(Scalar other)'),
            '__irshift__': ('__irshift__(Tensor other)', '__irshift__(Scalar other)'),
            '__ixor__': ('__ixor__(Tensor other)', '__ixor__(Scalar other)'),
            '__lshift__': ('__lshift__(Tensor other)', '__lshift__(Scalar other)'),
            '__or__': ('__or__(Tensor other)', '__or__(Scalar other)'),
            '__rshift__': ('__rshift__(Tensor other)', '__rshift__(Scalar other)'),
            '__xor__': ('__xor__(Tensor other)', '__xor__(Scalar other)'),
            '_addmm_activation': ('_addmm_activation(Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar '
                                  'alpha=1, bool use_gelu=False)',),
            '_autocast_to_full_precision': ('_autocast_to_full_precision(bool cuda_enabled, bool '
                                            'cpu_enabled)',),
            '_autocast_to_reduced_precision': ('_autocast_to_reduced_precision(bool cuda_enabled, bool '
                                               'cpu_enabled, ScalarType cuda_dtype, ScalarType cpu_dtype)',),
            '_coalesced_': ('_coalesced_(bool coalesced)',),
            '_philox_normal_': ('_philox_normal_(Tensor key, double mean=0, double std=1)',),
            '_philox_uniform_': ('_philox_uniform_(Tensor key, double low=0, double high=1)',),
            '_sparse_mask_projection': ('_sparse_mask_projection(Tensor mask, bool '
                                        'accumulate_matches=False)',),
            '_to_dense': ('_to_dense(ScalarType? dtype=None, bool? masked_grad=None)',),
            '_to_sparse': ('_to_sparse(*, Layout? layout=None, IntArrayRef[2]? blocksize=None, int64_t? '
                           'dense_dim=None)',
                           '_to_sparse(int64_t sparse_dim)'),
            '_to_sparse_bsc': ('_to_sparse_bsc(IntArrayRef[2] blocksize, int64_t? dense_dim=None)',),
            '_to_sparse_bsr': ('_to_sparse_bsr(IntArrayRef[2] blocksize, int64_t? dense_dim=None)',),
            '_to_sparse_csc': ('_to_sparse_csc(int64_t? dense_dim=None)',),
            '_to_sparse_csr': ('_to_sparse_csr(int64_t? dense_dim=None)',),
            'add': ('add(Scalar alpha, Tensor other)|deprecated', 'add(Tensor other, *, Scalar alpha=1)'),
            'add_': ('add_(Scalar alpha, Tensor other)|deprecated', 'add_(Tensor other, *, Scalar alpha=1)'),
            'addbmm': ('addbmm(Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)|deprecated',
                       'addbmm(Scalar beta, Tensor batch1, Tensor batch2)|deprecated',
                       'addbmm(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)'),
            'addbmm_': ('addbmm_(Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)|deprecated',
                        'addbmm_(Scalar beta, Tensor batch1, Tensor batch2)|deprecated',
                        'addbmm_(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)'),
            'addcdiv': ('addcdiv(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated',
                        'addcdiv(Tensor tensor1, Tensor tensor2, *, Scalar value=1)'),
            'addcdiv_': ('addcdiv_(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated',
                         'addcdiv_(Tensor tensor1, Tensor tensor2, *, Scalar value=1)'),
            'addcmul': ('addcmul(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated',
                        'addcmul(Tensor tensor1, Tensor tensor2, *, Scalar value=1)'),
            'addcmul_': ('addcmul_(Scalar value, Tensor tensor1, Tensor tensor2)|deprecated',
                         'addcmul_(Tensor tensor1, Tensor tensor2, *, Scalar value=1)'),
            'addmm': ('addmm(Scalar beta, Scalar alpha, Tensor mat1, Tensor mat2)|deprecated',
                      'addmm(Scalar beta, Tensor mat1, Tensor mat2)|deprecated',
                      'addmm(Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)'),
            'addmm_': ('addmm_(Scalar beta, Scalar alpha, Tensor mat1, Tensor mat2)|deprecated',
                       'addmm_(Scalar beta, Tensor mat1, Tensor mat2)|deprecated',
                       'addmm_(Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)'),
            'addmv': ('addmv(Scalar beta, Scalar alpha, Tensor mat, Tensor vec)|deprecated',
                      'addmv(Scalar beta, Tensor mat, Tensor vec)|deprecated',
                      'addmv(Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)'),
            'addmv_': ('addmv_(Scalar beta, Scalar alpha, Tensor mat, Tensor vec)|deprecated',
                       'addmv_(Scalar beta, Tensor mat, Tensor vec)|deprecated',
                       'addmv_(Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)'),
            'addr': ('addr(Scalar beta, Scalar alpha, Tensor vec1, Tensor vec2)|deprecated',
                     'addr(Scalar beta, Tensor vec1, Tensor vec2)|deprecated',
                     'addr(Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)'),
            'addr_': ('addr_(Scalar beta, Scalar alpha, Tensor vec1, Tensor vec2)|deprecated',
                      'addr_(Scalar beta, Tensor vec1, Tensor vec2)|deprecated',
                      'addr_(Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)'),
            'all': ('all()',
                    'all(IntArrayRef? dim=None, bool keepdim=False)',
                    'all(int64_t dim, bool keepdim=False)'),
            'allclose': ('allclose(Tensor other, double rtol=1e-05, double atol=1e-08, bool '
                         'equal_nan=False)',),
            'amax': ('amax(IntArrayRef[1] dim=None, bool keepdim=False)',),
            'amin': ('amin(IntArrayRef[1] dim=None, bool keepdim=False)',),
            'aminmax': ('aminmax(*, int64_t? dim=None, bool keepdim=False)',),
            'any': ('any()',
                    'any(IntArrayRef? dim=None, bool keepdim=False)',
                    'any(int64_t dim, bool keepdim=False)'),
            'arctan2': ('arctan2(Tensor other)',),
            'arctan2_': ('arctan2_(Tensor other)',),
            'argmax': ('argmax(int64_t? dim=None, bool keepdim=False)',),
            'argmin': ('argmin(int64_t? dim=None, bool keepdim=False)',),
            'argsort': ('argsort(*, bool stable, int64_t dim=-1, bool descending=False)',
                        'argsort(int64_t dim=-1, bool descending=False)'),
            'as_strided': ('as_strided(SymIntArrayRef size, SymIntArrayRef stride, SymInt? '
                           'storage_offset=None)',),
            'as_strided_': ('as_strided_(SymIntArrayRef size, SymIntArrayRef stride, SymInt? '
                            'storage_offset=None)',),
            'as_strided_scatter': ('as_strided_scatter(Tensor src, SymIntArrayRef size, SymIntArrayRef '
                                   'stride, SymInt? storage_offset=None)',),
            'atan2': ('atan2(Tensor other)',),
            'atan2_': ('atan2_(Tensor other)',),
            'baddbmm': ('baddbmm(Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)|deprecated',
                        'baddbmm(Scalar beta, Tensor batch1, Tensor batch2)|deprecated',
                        'baddbmm(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)'),
            'baddbmm_': ('baddbmm_(Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)|deprecated',
                         'baddbmm_(Scalar beta, Tensor batch1, Tensor batch2)|deprecated',
                         'baddbmm_(Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)'),
            'bernoulli': ('bernoulli(*, Generator? generator=None)',
                          'bernoulli(double p, *, Generator? generator=None)'),
            'bernoulli_': ('bernoulli_(Tensor p, *, Generator? generator=None)',
                           'bernoulli_(double p=0.5, *, Generator? generator=None)'),
            'bincount': ('bincount(Tensor? weights=None, SymInt minlength=0)',),
            'bitwise_and': ('bitwise_and(Tensor other)', 'bitwise_and(Scalar other)'),
            'bitwise_and_': ('bitwise_and_(Tensor other)', 'bitwise_and_(Scalar other)'),
            'bitwise_left_shift': ('bitwise_left_shift(Tensor other)', 'bitwise_left_shift(Scalar other)'),
            'bitwise_left_shift_': ('bitwise_left_shift_(Tensor other)', 'bitwise_left_shift_(Scalar other)'),
            'bitwise_or': ('bitwise_or(Tensor other)', 'bitwise_or(Scalar other)'),
            'bitwise_or_': ('bitwise_or_(Tensor other)', 'bitwise_or_(Scalar other)'),
            'bitwise_right_shift': ('bitwise_right_shift(Tensor other)', 'bitwise_right_shift(Scalar other)'),
            'bitwise_right_shift_': ('bitwise_right_shift_(Tensor other)',
                                     'bitwise_right_shift_(Scalar other)'),
            'bitwise_xor': ('bitwise_xor(Tensor other)', 'bitwise_xor(Scalar other)'),
            'bitwise_xor_': ('bitwise_xor_(Tensor other)', 'bitwise_xor_(Scalar other)'),
            'bmm': ('bmm(Tensor mat2)',),
            'broadcast_to': ('broadcast_to(SymIntArrayRef size)',),
            'cauchy_': ('cauchy_(double median=0, double sigma=1, *, Generator? generator=None)',),
            'chalf': ('chalf(*, MemoryFormat? memory_format=None)',),
            'cholesky': ('cholesky(bool upper=False)',),
            'cholesky_inverse': ('cholesky_inverse(bool upper=False)',),
            'cholesky_solve': ('cholesky_solve(Tensor input2, bool upper=False)',),
            'chunk': ('chunk(int64_t chunks, int64_t dim=0)',),
            'clamp': ('clamp(Tensor? min=None, Tensor? max=None)',
                      'clamp(Scalar? min=None, Scalar? max=None)'),
            'clamp_': ('clamp_(Tensor? min=None, Tensor? max=None)',
                       'clamp_(Scalar? min=None, Scalar? max=None)'),
            'clamp_max': ('clamp_max(Tensor max)', 'clamp_max(Scalar max)'),
            'clamp_max_': ('clamp_max_(Tensor max)', 'clamp_max_(Scalar max)'),
            'clamp_min': ('clamp_min(Tensor min)', 'clamp_min(Scalar min)'),
            'clamp_min_': ('clamp_min_(Tensor min)', 'clamp_min_(Scalar min)'),
            'clip': ('clip(Tensor? min=None, Tensor? max=None)', 'clip(Scalar? min=None, Scalar? max=None)'),
            'clip_': ('clip_(Tensor? min=None, Tensor? max=None)',
                      'clip_(Scalar? min=None, Scalar? max=None)'),
            'clone': ('clone(*, MemoryFormat? memory_format=None)',),
            'copysign': ('copysign(Tensor other)', 'copysign(Scalar other)'),
            'copysign_': ('copysign_(Tensor other)', 'copysign_(Scalar other)'),
            'count_nonzero': ('count_nonzero(int64_t? dim=None)', 'count_nonzero(IntArrayRef dim)'),
            'cov': ('cov(*, int64_t correction=1, Tensor? fweights=None, Tensor? aweights=None)',),
            'cross': ('cross(Tensor other, int64_t? dim=None)',),
            'cummax': ('cummax(int64_t dim)',),
            'cummin': ('cummin(int64_t dim)',),
            'cumprod': ('cumprod(int64_t dim, *, ScalarType? dtype=None)',),
            'cumprod_': ('cumprod_(int64_t dim, *, ScalarType? dtype=None)',),
            'cumsum': ('cumsum(int64_t dim, *, ScalarType? dtype=None)',),
            'cumsum_': ('cumsum_(int64_t dim, *, ScalarType? dtype=None)',),
            'diag': ('diag(int64_t diagonal=0)',),
            'diag_embed': ('diag_embed(int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1)',),
            'diagflat': ('diagflat(int64_t offset=0)',),
            'diagonal': ('diagonal(int64_t offset=0, int64_t dim1=0, int64_t dim2=1)',),
            'diagonal_scatter': ('diagonal_scatter(Tensor src, int64_t offset=0, int64_t dim1=0, int64_t '
                                 'dim2=1)',),
            'diff': ('diff(int64_t n=1, int64_t dim=-1, Tensor? prepend=None, Tensor? append=None)',),
            'dist': ('dist(Tensor other, Scalar p=2)',),
            'div': ('div(Tensor other)',
                    'div(Tensor other, *, c10::string_view? rounding_mode)',
                    'div(Scalar other, *, c10::string_view? rounding_mode)'),
            'div_': ('div_(Tensor other)',
                     'div_(Tensor other, *, c10::string_view? rounding_mode)',
                     'div_(Scalar other, *, c10::string_view? rounding_mode)'),
            'divide': ('divide(Tensor other)',
                       'divide(Tensor other, *, c10::string_view? rounding_mode)',
                       'divide(Scalar other)',
                       'divide(Scalar other, *, c10::string_view? rounding_mode)'),
            'divide_': ('divide_(Tensor other)',
                        'divide_(Tensor other, *, c10::string_view? rounding_mode)',
                        'divide_(Scalar other)',
                        'divide_(Scalar other, *, c10::string_view? rounding_mode)'),
            'dot': ('dot(Tensor tensor)',),
            'dsplit': ('dsplit(int64_t sections)', 'dsplit(IntArrayRef indices)'),
            'eq': ('eq(Tensor other)', 'eq(Scalar other)'),
            'eq_': ('eq_(Tensor other)', 'eq_(Scalar other)'),
            'equal': ('equal(Tensor other)',),
            'expand': ('expand(SymIntArrayRef size, *, bool implicit=False)',),
            'expand_as': ('expand_as(Tensor other)',),
            'exponential_': ('exponential_(double lambd=1, *, Generator? generator=None)',),
            'fill_': ('fill_(Tensor value)', 'fill_(Scalar value)'),
            'fill_diagonal_': ('fill_diagonal_(Scalar fill_value, bool wrap=False)',),
            'flatten': ('flatten(int64_t start_dim=0, int64_t end_dim=-1)',),
            'flip': ('flip(IntArrayRef dims)',),
            'float_power': ('float_power(Tensor exponent)', 'float_power(Scalar exponent)'),
            'float_power_': ('float_power_(Tensor exponent)', 'float_power_(Scalar exponent)'),
            'floor_divide': ('floor_divide(Tensor other)', 'floor_divide(Scalar other)'),
            'floor_divide_': ('floor_divide_(Tensor other)', 'floor_divide_(Scalar other)'),
            'fmax': ('fmax(Tensor other)',),
            'fmin': ('fmin(Tensor other)',),
            'fmod': ('fmod(Tensor other)', 'fmod(Scalar other)'),
            'fmod_': ('fmod_(Tensor other)', 'fmod_(Scalar other)'),
            'gather': ('gather(int64_t dim, Tensor index, *, bool sparse_grad=False)',),
            'gcd': ('gcd(Tensor other)',),
            'gcd_': ('gcd_(Tensor other)',),
            'ge': ('ge(Tensor other)', 'ge(Scalar other)'),
            'ge_': ('ge_(Tensor other)', 'ge_(Scalar other)'),
            'geometric_': ('geometric_(double p, *, Generator? generator=None)',),
            'ger': ('ger(Tensor vec2)',),
            'greater': ('greater(Tensor other)', 'greater(Scalar other)'),
            'greater_': ('greater_(Tensor other)', 'greater_(Scalar other)'),
            'greater_equal': ('greater_equal(Tensor other)', 'greater_equal(Scalar other)'),
            'greater_equal_': ('greater_equal_(Tensor other)', 'greater_equal_(Scalar other)'),
            'gt': ('gt(Tensor other)', 'gt(Scalar other)'),
            'gt_': ('gt_(Tensor other)', 'gt_(Scalar other)'),
            'hardshrink': ('hardshrink(Scalar lambd=0.5)',),
            'hash_tensor': ('hash_tensor(IntArrayRef[1] dim=None, *, bool keepdim=False, int64_t mode=0)',),
            'heaviside': ('heaviside(Tensor values)',),
            'heaviside_': ('heaviside_(Tensor values)',),
            'histc': ('histc(int64_t bins=100, Scalar min=0, Scalar max=0)',),
            'histogram': ('histogram(Tensor bins, *, Tensor? weight=None, bool density=False)',
                          'histogram(int64_t bins=100, *, ArrayRef<double>? range=None, Tensor? weight=None, '
                          'bool density=False)'),
            'hsplit': ('hsplit(int64_t sections)', 'hsplit(IntArrayRef indices)'),
            'hypot': ('hypot(Tensor other)',),
            'hypot_': ('hypot_(Tensor other)',),
            'igamma': ('igamma(Tensor other)',),
            'igamma_': ('igamma_(Tensor other)',),
            'igammac': ('igammac(Tensor other)',),
            'igammac_': ('igammac_(Tensor other)',),
            'index_add': ('index_add(int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1)',),
            'index_add_': ('index_add_(int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1)',),
            'index_copy': ('index_copy(int64_t dim, Tensor index, Tensor source)',),
            'index_copy_': ('index_copy_(int64_t dim, Tensor index, Tensor source)',),
            'index_fill': ('index_fill(int64_t dim, Tensor index, Tensor value)',
                           'index_fill(int64_t dim, Tensor index, Scalar value)'),
            'index_fill_': ('index_fill_(int64_t dim, Tensor index, Tensor value)',
                            'index_fill_(int64_t dim, Tensor index, Scalar value)'),
            'index_put': ('index_put(c10::List<::std::optional<Tensor>> indices, Tensor values, bool '
                          'accumulate=False)',),
            'index_put_': ('index_put_(c10::List<::std::optional<Tensor>> indices, Tensor values, bool '
                           'accumulate=False)',),
            'index_reduce': ('index_reduce(int64_t dim, Tensor index, Tensor source, c10::string_view '
                             'reduce, *, bool include_self=True)',),
            'index_reduce_': ('index_reduce_(int64_t dim, Tensor index, Tensor source, c10::string_view '
                              'reduce, *, bool include_self=True)',),
            'index_select': ('index_select(int64_t dim, Tensor index)',),
            'inner': ('inner(Tensor other)',),
            'is_pinned': ('is_pinned(Device? device=None)',),
            'is_same_size': ('is_same_size(Tensor other)',),
            'is_set_to': ('is_set_to(Tensor tensor)',),
            'isclose': ('isclose(Tensor other, double rtol=1e-05, double atol=1e-08, bool equal_nan=False)',),
            'kron': ('kron(Tensor other)',),
            'kthvalue': ('kthvalue(SymInt k, int64_t dim=-1, bool keepdim=False)',),
            'lcm': ('lcm(Tensor other)',),
            'lcm_': ('lcm_(Tensor other)',),
            'ldexp': ('ldexp(Tensor other)',),
            'ldexp_': ('ldexp_(Tensor other)',),
            'le': ('le(Tensor other)', 'le(Scalar other)'),
            'le_': ('le_(Tensor other)', 'le_(Scalar other)'),
            'lerp': ('lerp(Tensor end, Tensor weight)', 'lerp(Tensor end, Scalar weight)'),
            'lerp_': ('lerp_(Tensor end, Tensor weight)', 'lerp_(Tensor end, Scalar weight)'),
            'less': ('less(Tensor other)', 'less(Scalar other)'),
            'less_': ('less_(Tensor other)', 'less_(Scalar other)'),
            'less_equal': ('less_equal(Tensor other)', 'less_equal(Scalar other)'),
            'less_equal_': ('less_equal_(Tensor other)', 'less_equal_(Scalar other)'),
            'log_normal_': ('log_normal_(double mean=1, double std=2, *, Generator? generator=None)',),
            'log_softmax': ('log_softmax(int64_t dim, ScalarType? dtype=None)',),
            'logaddexp': ('logaddexp(Tensor other)',),
            'logaddexp2': ('logaddexp2(Tensor other)',),
            'logcumsumexp': ('logcumsumexp(int64_t dim)',),
            'logical_and': ('logical_and(Tensor other)',),
            'logical_and_': ('logical_and_(Tensor other)',),
            'logical_or': ('logical_or(Tensor other)',),
            'logical_or_': ('logical_or_(Tensor other)',),
            'logical_xor': ('logical_xor(Tensor other)',),
            'logical_xor_': ('logical_xor_(Tensor other)',),
            'logit': ('logit(double? eps=None)',),
            'logit_': ('logit_(double? eps=None)',),
            'logsumexp': ('logsumexp(IntArrayRef[1] dim, bool keepdim=False)',),
            'lt': ('lt(Tensor other)', 'lt(Scalar other)'),
            'lt_': ('lt_(Tensor other)', 'lt_(Scalar other)'),
            'lu_solve': ('lu_solve(Tensor LU_data, Tensor LU_pivots)',),
            'masked_fill': ('masked_fill(Tensor mask, Tensor value)',
                            'masked_fill(Tensor mask, Scalar value)'),
            'masked_fill_': ('masked_fill_(Tensor mask, Tensor value)',
                             'masked_fill_(Tensor mask, Scalar value)'),
            'masked_scatter': ('masked_scatter(Tensor mask, Tensor source)',),
            'masked_scatter_': ('masked_scatter_(Tensor mask, Tensor source)',),
            'masked_select': ('masked_select(Tensor mask)',),
            'matmul': ('matmul(Tensor other)',),
            'matrix_power': ('matrix_power(int64_t n)',),
            'max': ('max()', 'max(Tensor other)', 'max(int64_t dim, bool keepdim=False)'),
            'maximum': ('maximum(Tensor other)',),
            'mean': ('mean(*, ScalarType? dtype=None)',
                     'mean(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)'),
            'median': ('median()', 'median(int64_t dim, bool keepdim=False)'),
            'min': ('min()', 'min(Tensor other)', 'min(int64_t dim, bool keepdim=False)'),
            'minimum': ('minimum(Tensor other)',),
            'mm': ('mm(Tensor mat2)',),
            'mode': ('mode(int64_t dim=-1, bool keepdim=False)',),
            'moveaxis': ('moveaxis(int64_t source, int64_t destination)',
                         'moveaxis(IntArrayRef source, IntArrayRef destination)'),
            'movedim': ('movedim(int64_t source, int64_t destination)',
                        'movedim(IntArrayRef source, IntArrayRef destination)'),
            'mul': ('mul(Tensor other)',),
            'mul_': ('mul_(Tensor other)',),
            'multinomial': ('multinomial(SymInt num_samples, bool replacement=False, *, Generator? '
                            'generator=None)',),
            'multiply': ('multiply(Tensor other)', 'multiply(Scalar other)'),
            'multiply_': ('multiply_(Tensor other)', 'multiply_(Scalar other)'),
            'mv': ('mv(Tensor vec)',),
            'mvlgamma': ('mvlgamma(int64_t p)',),
            'mvlgamma_': ('mvlgamma_(int64_t p)',),
            'nan_to_num': ('nan_to_num(double? nan=None, double? posinf=None, double? neginf=None)',),
            'nan_to_num_': ('nan_to_num_(double? nan=None, double? posinf=None, double? neginf=None)',),
            'nanmean': ('nanmean(IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)',),
            'nanmedian': ('nanmedian()', 'nanmedian(int64_t dim, bool keepdim=False)'),
            'nanquantile': ('nanquantile(Tensor q, int64_t? dim=None, bool keepdim=False, *, '
                            'c10::string_view interpolation="linear")',
                            'nanquantile(double q, int64_t? dim=None, bool keepdim=False, *, '
                            'c10::string_view interpolation="linear")'),
            'nansum': ('nansum(IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)',),
            'narrow': ('narrow(int64_t dim, Tensor start, SymInt length)',
                       'narrow(int64_t dim, SymInt start, SymInt length)'),
            'narrow_copy': ('narrow_copy(int64_t dim, SymInt start, SymInt length)',),
            'ne': ('ne(Tensor other)', 'ne(Scalar other)'),
            'ne_': ('ne_(Tensor other)', 'ne_(Scalar other)'),
            'new_empty': ('new_empty(SymIntArrayRef size, *, ScalarType? dtype=None, Layout? layout=None, '
                          'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
            'new_empty_strided': ('new_empty_strided(SymIntArrayRef size, SymIntArrayRef stride, *, '
                                  'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                                  'pin_memory=False, bool? requires_grad=False)',),
            'new_full': ('new_full(SymIntArrayRef size, Scalar fill_value, *, ScalarType? dtype=None, '
                         'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                         'requires_grad=False)',),
            'new_ones': ('new_ones(SymIntArrayRef size, *, ScalarType? dtype=None, Layout? layout=None, '
                         'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
            'new_zeros': ('new_zeros(SymIntArrayRef size, *, ScalarType? dtype=None, Layout? layout=None, '
                          'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
            'nextafter': ('nextafter(Tensor other)',),
            'nextafter_': ('nextafter_(Tensor other)',),
            'nonzero_static': ('nonzero_static(*, SymInt size, int64_t fill_value=-1)',),
            'normal_': ('normal_(double mean=0, double std=1, *, Generator? generator=None)',),
            'not_equal': ('not_equal(Tensor other)', 'not_equal(Scalar other)'),
            'not_equal_': ('not_equal_(Tensor other)', 'not_equal_(Scalar other)'),
            'orgqr': ('orgqr(Tensor input2)',),
            'ormqr': ('ormqr(Tensor input2, Tensor input3, bool left=True, bool transpose=False)',),
            'outer': ('outer(Tensor vec2)',),
            'permute': ('permute(IntArrayRef dims)',),
            'pin_memory': ('pin_memory(Device? device=None)',),
            'pinverse': ('pinverse(double rcond=1e-15)',),
            'polygamma': ('polygamma(int64_t n)',),
            'polygamma_': ('polygamma_(int64_t n)',),
            'pow': ('pow(Tensor exponent)', 'pow(Scalar exponent)'),
            'pow_': ('pow_(Tensor exponent)', 'pow_(Scalar exponent)'),
            'prelu': ('prelu(Tensor weight)',),
            'prod': ('prod(*, ScalarType? dtype=None)',
                     'prod(int64_t dim, bool keepdim=False, *, ScalarType? dtype=None)'),
            'put': ('put(Tensor index, Tensor source, bool accumulate=False)',),
            'put_': ('put_(Tensor index, Tensor source, bool accumulate=False)',),
            'qr': ('qr(bool some=True)',),
            'quantile': ('quantile(Tensor q, int64_t? dim=None, bool keepdim=False, *, c10::string_view '
                         'interpolation="linear")',
                         'quantile(double q, int64_t? dim=None, bool keepdim=False, *, c10::string_view '
                         'interpolation="linear")'),
            'random_': ('random_(*, Generator? generator=None)',
                        'random_(int64_t from, int64_t? to, *, Generator? generator=None)',
                        'random_(int64_t to, *, Generator? generator=None)'),
            'record_stream': ('record_stream(Stream s)',),
            'remainder': ('remainder(Tensor other)', 'remainder(Scalar other)'),
            'remainder_': ('remainder_(Tensor other)', 'remainder_(Scalar other)'),
            'renorm': ('renorm(Scalar p, int64_t dim, Scalar maxnorm)',),
            'renorm_': ('renorm_(Scalar p, int64_t dim, Scalar maxnorm)',),
            'repeat': ('repeat(SymIntArrayRef repeats)',),
            'repeat_interleave': ('repeat_interleave(Tensor repeats, int64_t? dim=None, *, SymInt? '
                                  'output_size=None)',
                                  'repeat_interleave(SymInt repeats, int64_t? dim=None, *, SymInt? '
                                  'output_size=None)'),
            'reshape': ('reshape(SymIntArrayRef shape)',),
            'reshape_as': ('reshape_as(Tensor other)',),
            'resize_': ('resize_(SymIntArrayRef size, *, MemoryFormat? memory_format=None)',),
            'resize_as_': ('resize_as_(Tensor the_template, *, MemoryFormat? memory_format=None)',),
            'resize_as_sparse_': ('resize_as_sparse_(Tensor the_template)',),
            'roll': ('roll(SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)',),
            'rot90': ('rot90(int64_t k=1, IntArrayRef dims={0,1})',),
            'round': ('round()', 'round(*, int64_t decimals)'),
            'round_': ('round_()', 'round_(*, int64_t decimals)'),
            'scatter': ('scatter(int64_t dim, Tensor index, Tensor src)',
                        'scatter(int64_t dim, Tensor index, Tensor src, *, c10::string_view reduce)',
                        'scatter(int64_t dim, Tensor index, Scalar value)',
                        'scatter(int64_t dim, Tensor index, Scalar value, *, c10::string_view reduce)'),
            'scatter_': ('scatter_(int64_t dim, Tensor index, Tensor src)',
                         'scatter_(int64_t dim, Tensor index, Tensor src, *, c10::string_view reduce)',
                         'scatter_(int64_t dim, Tensor index, Scalar value)',
                         'scatter_(int64_t dim, Tensor index, Scalar value, *, c10::string_view reduce)'),
            'scatter_add': ('scatter_add(int64_t dim, Tensor index, Tensor src)',),
            'scatter_add_': ('scatter_add_(int64_t dim, Tensor index, Tensor src)',),
            'scatter_reduce': ('scatter_reduce(int64_t dim, Tensor index, Tensor src, c10::string_view '
                               'reduce, *, bool include_self=True)',),
            'scatter_reduce_': ('scatter_reduce_(int64_t dim, Tensor index, Tensor src, c10::string_view '
                                'reduce, *, bool include_self=True)',),
            'select': ('select(int64_t dim, SymInt index)',),
            'select_scatter': ('select_scatter(Tensor src, int64_t dim, SymInt index)',),
            'slice_inverse': ('slice_inverse(Tensor src, int64_t dim=0, SymInt? start=None, SymInt? '
                              'end=None, SymInt step=1)',),
            'slice_scatter': ('slice_scatter(Tensor src, int64_t dim=0, SymInt? start=None, SymInt? '
                              'end=None, SymInt step=1)',),
            'smm': ('smm(Tensor mat2)',),
            'softmax': ('softmax(int64_t dim, ScalarType? dtype=None)',),
            'sort': ('sort(*, bool? stable, int64_t dim=-1, bool descending=False)',
                     'sort(int64_t dim=-1, bool descending=False)'),
            'sparse_mask': ('sparse_mask(Tensor mask)',),
            'sparse_resize_': ('sparse_resize_(IntArrayRef size, int64_t sparse_dim, int64_t dense_dim)',),
            'sparse_resize_and_clear_': ('sparse_resize_and_clear_(IntArrayRef size, int64_t sparse_dim, '
                                         'int64_t dense_dim)',),
            'split_with_sizes': ('split_with_sizes(SymIntArrayRef split_sizes, int64_t dim=0)',),
            'squeeze': ('squeeze()', 'squeeze(int64_t dim)', 'squeeze(IntArrayRef dim)'),
            'squeeze_': ('squeeze_()', 'squeeze_(int64_t dim)', 'squeeze_(IntArrayRef dim)'),
            'sspaddmm': ('sspaddmm(Scalar beta, Scalar alpha, Tensor mat1, Tensor mat2)|deprecated',
                         'sspaddmm(Scalar beta, Tensor mat1, Tensor mat2)|deprecated',
                         'sspaddmm(Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)'),
            'std': ('std(IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)',
                    'std(IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)',
                    'std(bool unbiased=True)'),
            'sub': ('sub(Scalar alpha, Tensor other)|deprecated', 'sub(Tensor other, *, Scalar alpha=1)'),
            'sub_': ('sub_(Scalar alpha, Tensor other)|deprecated', 'sub_(Tensor other, *, Scalar alpha=1)'),
            'subtract': ('subtract(Tensor other, *, Scalar alpha=1)',
                         'subtract(Scalar other, Scalar alpha=1)'),
            'subtract_': ('subtract_(Tensor other, *, Scalar alpha=1)',
                          'subtract_(Scalar other, Scalar alpha=1)'),
            'sum': ('sum(*, ScalarType? dtype=None)',
                    'sum(IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)'),
            'sum_to_size': ('sum_to_size(SymIntArrayRef size)',),
            'svd': ('svd(bool some=True, bool compute_uv=True)',),
            'swapaxes': ('swapaxes(int64_t axis0, int64_t axis1)',),
            'swapaxes_': ('swapaxes_(int64_t axis0, int64_t axis1)',),
            'swapdims': ('swapdims(int64_t dim0, int64_t dim1)',),
            'swapdims_': ('swapdims_(int64_t dim0, int64_t dim1)',),
            'take': ('take(Tensor index)',),
            'take_along_dim': ('take_along_dim(Tensor indices, int64_t? dim=None)',),
            'tensor_split': ('tensor_split(SymIntArrayRef indices, int64_t dim=0)',
                             'tensor_split(Tensor tensor_indices_or_sections, int64_t dim=0)',
                             'tensor_split(SymInt sections, int64_t dim=0)'),
            'tile': ('tile(SymIntArrayRef dims)',),
            'to_dense': ('to_dense(ScalarType? dtype=None, *, bool? masked_grad=None)',),
            'to_mkldnn': ('to_mkldnn(ScalarType? dtype=None)',),
            'to_padded_tensor': ('to_padded_tensor(double padding, SymIntArrayRef? output_size=None)',),
            'to_sparse': ('to_sparse(*, Layout? layout=None, IntArrayRef[2]? blocksize=None, int64_t? '
                          'dense_dim=None)',
                          'to_sparse(int64_t sparse_dim)'),
            'to_sparse_bsc': ('to_sparse_bsc(IntArrayRef[2] blocksize, int64_t? dense_dim=None)',),
            'to_sparse_bsr': ('to_sparse_bsr(IntArrayRef[2] blocksize, int64_t? dense_dim=None)',),
            'to_sparse_csc': ('to_sparse_csc(int64_t? dense_dim=None)',),
            'to_sparse_csr': ('to_sparse_csr(int64_t? dense_dim=None)',),
            'topk': ('topk(SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True)',),
            'transpose': ('transpose(int64_t dim0, int64_t dim1)',),
            'transpose_': ('transpose_(int64_t dim0, int64_t dim1)',),
            'triangular_solve': ('triangular_solve(Tensor A, bool upper=True, bool transpose=False, bool '
                                 'unitriangular=False)',),
            'tril': ('tril(SymInt diagonal=0)',),
            'tril_': ('tril_(SymInt diagonal=0)',),
            'triu': ('triu(SymInt diagonal=0)',),
            'triu_': ('triu_(SymInt diagonal=0)',),
            'true_divide': ('true_divide(Tensor other)', 'true_divide(Scalar other)'),
            'true_divide_': ('true_divide_(Tensor other)', 'true_divide_(Scalar other)'),
            'type_as': ('type_as(Tensor other)',),
            'unbind': ('unbind(int64_t dim=0)',),
            'unfold': ('unfold(int64_t dimension, int64_t size, int64_t step)',),
            'uniform_': ('uniform_(double from=0, double to=1, *, Generator? generator=None)',),
            'unsafe_chunk': ('unsafe_chunk(int64_t chunks, int64_t dim=0)',),
            'unsafe_split': ('unsafe_split(SymInt split_size, int64_t dim=0)',),
            'unsafe_split_with_sizes': ('unsafe_split_with_sizes(SymIntArrayRef split_sizes, int64_t '
                                        'dim=0)',),
            'unsqueeze': ('unsqueeze(int64_t dim)',),
            'unsqueeze_': ('unsqueeze_(int64_t dim)',),
            'var': ('var(IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)',
                    'var(IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)',
                    'var(bool unbiased=True)'),
            'vdot': ('vdot(Tensor other)',),
            'view': ('view(ScalarType dtype)', 'view(SymIntArrayRef size)'),
            'view_as': ('view_as(Tensor other)',),
            'vsplit': ('vsplit(int64_t sections)', 'vsplit(IntArrayRef indices)'),
            'where': ('where(Tensor condition, Tensor other)', 'where(Tensor condition, Scalar other)'),
            'xlogy': ('xlogy(Tensor other)', 'xlogy(Scalar other)'),
            'xlogy_': ('xlogy_(Tensor other)', 'xlogy_(Scalar other)')},
 '_VF': {'atleast_1d': ('atleast_1d(Tensor input)', 'atleast_1d(TensorList tensors)'),
         'atleast_2d': ('atleast_2d(Tensor input)', 'atleast_2d(TensorList tensors)'),
         'atleast_3d': ('atleast_3d(Tensor input)', 'atleast_3d(TensorList tensors)'),
         'block_diag': ('block_diag(TensorList tensors)',),
         'broadcast_tensors': ('broadcast_tensors(TensorList tensors)',),
         'cartesian_prod': ('cartesian_prod(TensorList tensors)',),
         'chain_matmul': ('chain_matmul(TensorList matrices, *, Tensor out=None)',),
         'meshgrid': ('meshgrid(TensorList tensors)',
                      'meshgrid(TensorList tensors, *, c10::string_view indexing)')},
 '_manual': {'_to_dlpack': ('_to_dlpack(Tensor data, *, IntArrayRef? dl_device=None, bool? copy=None)',),
             'numel': ('numel(Tensor input)',)},
 '_methods': {'unflatten': ('unflatten(int64_t dim, SymIntArrayRef sizes)',)},
 '_natives': {'cdist': ('cdist(Tensor x1, Tensor x2, double p=2, int64_t? compute_mode=None)',),
              'einsum': ('einsum(c10::string_view equation, TensorList tensors, *, IntArrayRef? path=None)',),
              'unique_consecutive': ('unique_consecutive(Tensor input, bool return_inverse=False, bool '
                                     'return_counts=False, int64_t? dim=None)',)},
 'fft': {'fft_fft': ('fft_fft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, *, '
                     'Tensor out=None)',),
         'fft_fft2': ('fft_fft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                      'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_fftfreq': ('fft_fftfreq(int64_t n, double d=1.0, *, Tensor out=None, ScalarType? dtype=None, '
                         'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                         'requires_grad=False)',),
         'fft_fftn': ('fft_fftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                      'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_fftshift': ('fft_fftshift(Tensor input, IntArrayRef[1]? dim=None)',),
         'fft_hfft': ('fft_hfft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, '
                      '*, Tensor out=None)',),
         'fft_hfft2': ('fft_hfft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                       'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_hfftn': ('fft_hfftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                       'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_ifft': ('fft_ifft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, '
                      '*, Tensor out=None)',),
         'fft_ifft2': ('fft_ifft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                       'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_ifftn': ('fft_ifftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                       'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_ifftshift': ('fft_ifftshift(Tensor input, IntArrayRef[1]? dim=None)',),
         'fft_ihfft': ('fft_ihfft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, '
                       '*, Tensor out=None)',),
         'fft_ihfft2': ('fft_ihfft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                        'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_ihfftn': ('fft_ihfftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                        'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_irfft': ('fft_irfft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, '
                       '*, Tensor out=None)',),
         'fft_irfft2': ('fft_irfft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                        'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_irfftn': ('fft_irfftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                        'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_rfft': ('fft_rfft(Tensor input, SymInt? n=None, int64_t dim=-1, c10::string_view? norm=None, '
                      '*, Tensor out=None)',),
         'fft_rfft2': ('fft_rfft2(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1] dim={-2,-1}, '
                       'c10::string_view? norm=None, *, Tensor out=None)',),
         'fft_rfftfreq': ('fft_rfftfreq(int64_t n, double d=1.0, *, Tensor out=None, ScalarType? dtype=None, '
                          'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                          'requires_grad=False)',),
         'fft_rfftn': ('fft_rfftn(Tensor input, SymIntArrayRef[1]? s=None, IntArrayRef[1]? dim=None, '
                       'c10::string_view? norm=None, *, Tensor out=None)',)},
 'linalg': {'_linalg_eigvals': ('_linalg_eigvals(Tensor input)',),
            'linalg__powsum': ('linalg__powsum(Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, bool '
                               'keepdim=False, *, ScalarType? dtype=None)',),
            'linalg_cholesky': ('linalg_cholesky(Tensor input, *, bool upper=False, Tensor out=None)',),
            'linalg_cholesky_ex': ('linalg_cholesky_ex(Tensor input, *, bool upper=False, bool '
                                   'check_errors=False, TensorList[2] out=None)',),
            'linalg_cond': ('linalg_cond(Tensor input, Scalar? p=None, *, Tensor out=None)',
                            'linalg_cond(Tensor input, c10::string_view p, *, Tensor out=None)'),
            'linalg_cross': ('linalg_cross(Tensor input, Tensor other, *, int64_t dim=-1, Tensor out=None)',),
            'linalg_det': ('linalg_det(Tensor A, *, Tensor out=None)',),
            'linalg_diagonal': ('linalg_diagonal(Tensor A, *, int64_t offset=0, int64_t dim1=-2, int64_t '
                                'dim2=-1)',),
            'linalg_eig': ('linalg_eig(Tensor input, *, TensorList[2] out=None)',),
            'linalg_eigh': ('linalg_eigh(Tensor input, c10::string_view UPLO="L", *, TensorList[2] '
                            'out=None)',),
            'linalg_eigvals': ('linalg_eigvals(Tensor input, *, Tensor out=None)',),
            'linalg_eigvalsh': ('linalg_eigvalsh(Tensor input, c10::string_view UPLO="L", *, Tensor '
                                'out=None)',),
            'linalg_householder_product': ('linalg_householder_product(Tensor input, Tensor tau, *, Tensor '
                                           'out=None)',),
            'linalg_inv': ('linalg_inv(Tensor A, *, Tensor out=None)',),
            'linalg_inv_ex': ('linalg_inv_ex(Tensor A, *, bool check_errors=False, TensorList[2] out=None)',),
            'linalg_ldl_factor': ('linalg_ldl_factor(Tensor input, *, bool hermitian=False, TensorList[2] '
                                  'out=None)',),
            'linalg_ldl_factor_ex': ('linalg_ldl_factor_ex(Tensor input, *, bool hermitian=False, bool '
                                     'check_errors=False, TensorList[3] out=None)',),
            'linalg_ldl_solve': ('linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool '
                                 'hermitian=False, Tensor out=None)',),
            'linalg_lstsq': ('linalg_lstsq(Tensor input, Tensor b, double? rcond=None, *, c10::string_view? '
                             'driver=None, TensorList[4] out=None)',),
            'linalg_lu': ('linalg_lu(Tensor A, *, bool pivot=True, TensorList[3] out=None)',),
            'linalg_lu_factor': ('linalg_lu_factor(Tensor A, *, bool pivot=True, TensorList[2] out=None)',),
            'linalg_lu_factor_ex': ('linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool '
                                    'check_errors=False, TensorList[3] out=None)',),
            'linalg_lu_solve': ('linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool '
                                'adjoint=False, Tensor out=None)',),
            'linalg_matmul': ('linalg_matmul(Tensor input, Tensor other, *, Tensor out=None)',),
            'linalg_matrix_exp': ('linalg_matrix_exp(Tensor input)',),
            'linalg_matrix_norm': ('linalg_matrix_norm(Tensor input, Scalar ord, IntArrayRef dim={-2,-1}, '
                                   'bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)',
                                   'linalg_matrix_norm(Tensor input, c10::string_view ord="fro", IntArrayRef '
                                   'dim={-2,-1}, bool keepdim=False, *, ScalarType? dtype=None, Tensor '
                                   'out=None)'),
            'linalg_matrix_power': ('linalg_matrix_power(Tensor input, int64_t n, *, Tensor out=None)',),
            'linalg_matrix_rank': ('linalg_matrix_rank(Tensor input, *, Tensor? atol=None, Tensor? '
                                   'rtol=None, bool hermitian=False, Tensor out=None)',
                                   'linalg_matrix_rank(Tensor input, *, double? atol=None, double? '
                                   'rtol=None, bool hermitian=False, Tensor out=None)',
                                   'linalg_matrix_rank(Tensor input, Tensor tol, bool hermitian=False, *, '
                                   'Tensor out=None)',
                                   'linalg_matrix_rank(Tensor input, double tol, bool hermitian=False, *, '
                                   'Tensor out=None)'),
            'linalg_multi_dot': ('linalg_multi_dot(TensorList tensors, *, Tensor out=None)',),
            'linalg_norm': ('linalg_norm(Tensor input, Scalar? ord=None, IntArrayRef[1]? dim=None, bool '
                            'keepdim=False, *, ScalarType? dtype=None, Tensor out=None)',
                            'linalg_norm(Tensor input, c10::string_view ord, IntArrayRef[1]? dim=None, bool '
                            'keepdim=False, *, ScalarType? dtype=None, Tensor out=None)'),
            'linalg_pinv': ('linalg_pinv(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool '
                            'hermitian=False, Tensor out=None)',
                            'linalg_pinv(Tensor input, *, double? atol=None, double? rtol=None, bool '
                            'hermitian=False, Tensor out=None)',
                            'linalg_pinv(Tensor input, Tensor rcond, bool hermitian=False, *, Tensor '
                            'out=None)',
                            'linalg_pinv(Tensor input, double rcond, bool hermitian=False, *, Tensor '
                            'out=None)'),
            'linalg_qr': ('linalg_qr(Tensor A, c10::string_view mode="reduced", *, TensorList[2] out=None)',),
            'linalg_slogdet': ('linalg_slogdet(Tensor A, *, TensorList[2] out=None)',),
            'linalg_solve': ('linalg_solve(Tensor A, Tensor B, *, bool left=True, Tensor out=None)',),
            'linalg_solve_ex': ('linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool '
                                'check_errors=False, TensorList[2] out=None)',),
            'linalg_solve_triangular': ('linalg_solve_triangular(Tensor input, Tensor B, *, bool upper, bool '
                                        'left=True, bool unitriangular=False, Tensor out=None)',),
            'linalg_svd': ('linalg_svd(Tensor A, bool full_matrices=True, *, c10::string_view? driver=None, '
                           'TensorList[3] out=None)',),
            'linalg_svdvals': ('linalg_svdvals(Tensor A, *, c10::string_view? driver=None, Tensor '
                               'out=None)',),
            'linalg_tensorinv': ('linalg_tensorinv(Tensor input, int64_t ind=2, *, Tensor out=None)',),
            'linalg_tensorsolve': ('linalg_tensorsolve(Tensor input, Tensor other, IntArrayRef? dims=None, '
                                   '*, Tensor out=None)',),
            'linalg_vander': ('linalg_vander(Tensor x, *, SymInt? N=None)',),
            'linalg_vecdot': ('linalg_vecdot(Tensor x, Tensor y, *, int64_t dim=-1, Tensor out=None)',),
            'linalg_vector_norm': ('linalg_vector_norm(Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, '
                                   'bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)',)},
 'nn': {'_conv_depthwise2d': ('_conv_depthwise2d(Tensor input, Tensor weight, SymIntArrayRef[2] kernel_size, '
                              'Tensor? bias, SymIntArrayRef[2] stride, SymIntArrayRef[2] padding, '
                              'SymIntArrayRef[2] dilation, *, Tensor out=None)',),
        '_pad_circular': ('_pad_circular(Tensor input, SymIntArrayRef pad)',),
        '_pad_enum': ('_pad_enum(Tensor input, SymIntArrayRef pad, int64_t mode, double? value=None)',),
        '_test_ambiguous_defaults': ('_test_ambiguous_defaults(Tensor dummy, int64_t a=1, int64_t b=1)',
                                     '_test_ambiguous_defaults(Tensor dummy, int64_t a=2, c10::string_view '
                                     'b="2")'),
        '_test_optional_filled_intlist': ('_test_optional_filled_intlist(Tensor values, IntArrayRef[2]? '
                                          'addends)',),
        '_test_optional_floatlist': ('_test_optional_floatlist(Tensor values, ArrayRef<double>? addends)',),
        '_test_optional_intlist': ('_test_optional_intlist(Tensor values, IntArrayRef? addends)',),
        '_test_string_default': ('_test_string_default(Tensor dummy, c10::string_view a="\\"\'\\\\", '
                                 'c10::string_view b="\\"\'\\\\")',),
        '_test_warn_in_autograd': ('_test_warn_in_autograd(Tensor input)',),
        '_upsample_bicubic2d_aa': ('_upsample_bicubic2d_aa(Tensor input, SymIntArrayRef? output_size, bool '
                                   'align_corners, ArrayRef<double>? scale_factors)',
                                   '_upsample_bicubic2d_aa(Tensor input, SymIntArrayRef[2] output_size, bool '
                                   'align_corners, double? scales_h=None, double? scales_w=None, *, Tensor '
                                   'out=None)'),
        '_upsample_bilinear2d_aa': ('_upsample_bilinear2d_aa(Tensor input, SymIntArrayRef? output_size, bool '
                                    'align_corners, ArrayRef<double>? scale_factors)',
                                    '_upsample_bilinear2d_aa(Tensor input, SymIntArrayRef[2] output_size, '
                                    'bool align_corners, double? scales_h=None, double? scales_w=None, *, '
                                    'Tensor out=None)'),
        '_upsample_lanczos2d_aa': ('_upsample_lanczos2d_aa(Tensor input, SymIntArrayRef? output_size, bool '
                                   'align_corners, ArrayRef<double>? scale_factors)',
                                   '_upsample_lanczos2d_aa(Tensor input, SymIntArrayRef[2] output_size, bool '
                                   'align_corners, double? scales_h=None, double? scales_w=None, *, Tensor '
                                   'out=None)'),
        '_upsample_nearest_exact1d': ('_upsample_nearest_exact1d(Tensor input, SymIntArrayRef? output_size, '
                                      'ArrayRef<double>? scale_factors)',
                                      '_upsample_nearest_exact1d(Tensor input, SymIntArrayRef[1] '
                                      'output_size, double? scales=None, *, Tensor out=None)'),
        '_upsample_nearest_exact2d': ('_upsample_nearest_exact2d(Tensor input, SymIntArrayRef? output_size, '
                                      'ArrayRef<double>? scale_factors)',
                                      '_upsample_nearest_exact2d(Tensor input, SymIntArrayRef[2] '
                                      'output_size, double? scales_h=None, double? scales_w=None, *, Tensor '
                                      'out=None)'),
        '_upsample_nearest_exact3d': ('_upsample_nearest_exact3d(Tensor input, SymIntArrayRef? output_size, '
                                      'ArrayRef<double>? scale_factors)',
                                      '_upsample_nearest_exact3d(Tensor input, SymIntArrayRef[3] '
                                      'output_size, double? scales_d=None, double? scales_h=None, double? '
                                      'scales_w=None, *, Tensor out=None)'),
        'adaptive_avg_pool2d': ('adaptive_avg_pool2d(Tensor input, SymIntArrayRef[2] output_size, *, Tensor '
                                'out=None)',),
        'adaptive_avg_pool3d': ('adaptive_avg_pool3d(Tensor input, SymIntArrayRef[3] output_size, *, Tensor '
                                'out=None)',),
        'adaptive_max_pool2d': ('adaptive_max_pool2d(Tensor input, IntArrayRef[2] output_size, *, '
                                'TensorList[2] out=None)',),
        'adaptive_max_pool3d': ('adaptive_max_pool3d(Tensor input, IntArrayRef[3] output_size, *, '
                                'TensorList[2] out=None)',),
        'avg_pool2d': ('avg_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] stride=None, '
                       'IntArrayRef[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, '
                       'int64_t? divisor_override=None, *, Tensor out=None)',),
        'avg_pool3d': ('avg_pool3d(Tensor input, IntArrayRef[3] kernel_size, IntArrayRef[3] stride=None, '
                       'IntArrayRef[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, '
                       'int64_t? divisor_override=None, *, Tensor out=None)',),
        'binary_cross_entropy': ('binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, '
                                 'int64_t reduction=at::Reduction::Mean, *, Tensor out=None)',),
        'col2im': ('col2im(Tensor input, SymIntArrayRef[2] output_size, IntArrayRef[2] kernel_size, '
                   'IntArrayRef[2] dilation, IntArrayRef[2] padding, IntArrayRef[2] stride, *, Tensor '
                   'out=None)',),
        'conv_depthwise3d': ('conv_depthwise3d(Tensor input, Tensor weight, SymIntArrayRef[3] kernel_size, '
                             'Tensor? bias, SymIntArrayRef[3] stride, SymIntArrayRef[3] padding, '
                             'SymIntArrayRef[3] dilation)',),
        'cross_entropy_loss': ('cross_entropy_loss(Tensor input, Tensor target, Tensor? weight=None, int64_t '
                               'reduction=at::Reduction::Mean, SymInt ignore_index=-100, double '
                               'label_smoothing=0.0)',),
        'elu': ('elu(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor '
                'out=None)',),
        'elu_': ('elu_(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)',),
        'flatten_dense_tensors': ('flatten_dense_tensors(TensorList tensors)',),
        'fractional_max_pool2d': ('fractional_max_pool2d(Tensor input, IntArrayRef[2] kernel_size, '
                                  'IntArrayRef[2] output_size, Tensor random_samples, *, TensorList[2] '
                                  'out=None)',),
        'fractional_max_pool3d': ('fractional_max_pool3d(Tensor input, IntArrayRef[3] kernel_size, '
                                  'IntArrayRef[3] output_size, Tensor random_samples, *, TensorList[2] '
                                  'out=None)',),
        'gelu': ('gelu(Tensor input, *, c10::string_view approximate="none", Tensor out=None)',),
        'gelu_': ('gelu_(Tensor input, *, c10::string_view approximate="none")',),
        'glu': ('glu(Tensor input, int64_t dim=-1, *, Tensor out=None)',),
        'hardsigmoid': ('hardsigmoid(Tensor input, *, Tensor out=None)',),
        'hardsigmoid_': ('hardsigmoid_(Tensor input)',),
        'hardswish': ('hardswish(Tensor input, *, Tensor out=None)',),
        'hardswish_': ('hardswish_(Tensor input)',),
        'hardtanh': ('hardtanh(Tensor input, Scalar min_val=-1, Scalar max_val=1, *, Tensor out=None)',),
        'hardtanh_': ('hardtanh_(Tensor input, Scalar min_val=-1, Scalar max_val=1)',),
        'huber_loss': ('huber_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, '
                       'double delta=1.0, *, Tensor out=None)',),
        'im2col': ('im2col(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] dilation, IntArrayRef[2] '
                   'padding, IntArrayRef[2] stride, *, Tensor out=None)',),
        'l1_loss': ('l1_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean)',),
        'leaky_relu': ('leaky_relu(Tensor input, Scalar negative_slope=0.01, *, Tensor out=None)',),
        'leaky_relu_': ('leaky_relu_(Tensor input, Scalar negative_slope=0.01)',),
        'linear': ('linear(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor out=None)',),
        'log_sigmoid': ('log_sigmoid(Tensor input, *, Tensor out=None)',),
        'max_pool2d_with_indices': ('max_pool2d_with_indices(Tensor input, IntArrayRef[2] kernel_size, '
                                    'IntArrayRef[2] stride=None, IntArrayRef[2] padding=0, IntArrayRef[2] '
                                    'dilation=1, bool ceil_mode=False, *, TensorList[2] out=None)',),
        'max_pool3d_with_indices': ('max_pool3d_with_indices(Tensor input, IntArrayRef[3] kernel_size, '
                                    'IntArrayRef[3] stride=None, IntArrayRef[3] padding=0, IntArrayRef[3] '
                                    'dilation=1, bool ceil_mode=False, *, TensorList[2] out=None)',),
        'max_unpool2d': ('max_unpool2d(Tensor input, Tensor indices, SymIntArrayRef[2] output_size, *, '
                         'Tensor out=None)',),
        'max_unpool3d': ('max_unpool3d(Tensor input, Tensor indices, SymIntArrayRef[3] output_size, '
                         'IntArrayRef[3] stride, IntArrayRef[3] padding, *, Tensor out=None)',),
        'mish': ('mish(Tensor input, *, Tensor out=None)',),
        'mish_': ('mish_(Tensor input)',),
        'mkldnn_linear': ('mkldnn_linear(Tensor input, Tensor weight, Tensor? bias=None)',),
        'mkldnn_reorder_conv2d_weight': ('mkldnn_reorder_conv2d_weight(Tensor input, SymIntArrayRef[2] '
                                         'padding=0, SymIntArrayRef[2] stride=1, SymIntArrayRef[2] '
                                         'dilation=1, SymInt groups=1, SymIntArrayRef? input_size=None)',),
        'mkldnn_reorder_conv3d_weight': ('mkldnn_reorder_conv3d_weight(Tensor input, SymIntArrayRef[3] '
                                         'padding=0, SymIntArrayRef[3] stride=1, SymIntArrayRef[3] '
                                         'dilation=1, SymInt groups=1, SymIntArrayRef? input_size=None)',),
        'mse_loss': ('mse_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, *, Tensor '
                     'out=None)',),
        'multi_margin_loss': ('multi_margin_loss(Tensor input, Tensor target, Scalar p=1, Scalar margin=1, '
                              'Tensor? weight=None, int64_t reduction=at::Reduction::Mean, *, Tensor '
                              'out=None)',),
        'multilabel_margin_loss': ('multilabel_margin_loss(Tensor input, Tensor target, int64_t '
                                   'reduction=at::Reduction::Mean, *, Tensor out=None)',),
        'nll_loss': ('nll_loss(Tensor input, Tensor target, Tensor? weight=None, int64_t '
                     'reduction=at::Reduction::Mean, SymInt ignore_index=-100, *, Tensor out=None)',),
        'nll_loss2d': ('nll_loss2d(Tensor input, Tensor target, Tensor? weight=None, int64_t '
                       'reduction=at::Reduction::Mean, SymInt ignore_index=-100, *, Tensor out=None)',),
        'nll_loss_nd': ('nll_loss_nd(Tensor input, Tensor target, Tensor? weight=None, int64_t '
                        'reduction=at::Reduction::Mean, SymInt ignore_index=-100)',),
        'one_hot': ('one_hot(Tensor input, int64_t num_classes=-1)',),
        'pad': ('pad(Tensor input, SymIntArrayRef pad, c10::string_view mode="constant", double? '
                'value=None)',),
        'pad_sequence': ('pad_sequence(TensorList sequences, bool batch_first=False, double '
                         'padding_value=0.0, c10::string_view padding_side="right")',),
        'reflection_pad1d': ('reflection_pad1d(Tensor input, SymIntArrayRef[2] padding, *, Tensor '
                             'out=None)',),
        'reflection_pad2d': ('reflection_pad2d(Tensor input, SymIntArrayRef[4] padding, *, Tensor '
                             'out=None)',),
        'reflection_pad3d': ('reflection_pad3d(Tensor input, SymIntArrayRef[6] padding, *, Tensor '
                             'out=None)',),
        'relu6': ('relu6(Tensor input)',),
        'relu6_': ('relu6_(Tensor input)',),
        'replication_pad1d': ('replication_pad1d(Tensor input, SymIntArrayRef[2] padding, *, Tensor '
                              'out=None)',),
        'replication_pad2d': ('replication_pad2d(Tensor input, SymIntArrayRef[4] padding, *, Tensor '
                              'out=None)',),
        'replication_pad3d': ('replication_pad3d(Tensor input, SymIntArrayRef[6] padding, *, Tensor '
                              'out=None)',),
        'rrelu_with_noise': ('rrelu_with_noise(Tensor input, Tensor noise, Scalar lower=0.125, Scalar '
                             'upper=0.3333333333333333, bool training=False, Generator? generator=None, *, '
                             'Tensor out=None)',),
        'rrelu_with_noise_': ('rrelu_with_noise_(Tensor input, Tensor noise, Scalar lower=0.125, Scalar '
                              'upper=0.3333333333333333, bool training=False, Generator? generator=None)',),
        'scaled_dot_product_attention': ('scaled_dot_product_attention(Tensor query, Tensor key, Tensor '
                                         'value, Tensor? attn_mask=None, double dropout_p=0.0, bool '
                                         'is_causal=False, *, double? scale=None, bool enable_gqa=False)',),
        'silu': ('silu(Tensor input, *, Tensor out=None)',),
        'silu_': ('silu_(Tensor input)',),
        'slow_conv3d': ('slow_conv3d(Tensor input, Tensor weight, SymIntArrayRef[3] kernel_size, Tensor? '
                        'bias=None, SymIntArrayRef[3] stride=1, SymIntArrayRef[3] padding=0, *, Tensor '
                        'out=None)',),
        'slow_conv_dilated2d': ('slow_conv_dilated2d(Tensor input, Tensor weight, SymIntArrayRef[2] '
                                'kernel_size, Tensor? bias=None, SymIntArrayRef[2] stride=1, '
                                'SymIntArrayRef[2] padding=0, SymIntArrayRef[2] dilation=1)',),
        'slow_conv_dilated3d': ('slow_conv_dilated3d(Tensor input, Tensor weight, SymIntArrayRef[3] '
                                'kernel_size, Tensor? bias=None, SymIntArrayRef[3] stride=1, '
                                'SymIntArrayRef[3] padding=0, SymIntArrayRef[3] dilation=1)',),
        'slow_conv_transpose2d': ('slow_conv_transpose2d(Tensor input, Tensor weight, SymIntArrayRef[2] '
                                  'kernel_size, Tensor? bias=None, SymIntArrayRef[2] stride=1, '
                                  'SymIntArrayRef[2] padding=0, SymIntArrayRef[2] output_padding=0, '
                                  'SymIntArrayRef[2] dilation=1, *, Tensor out=None)',),
        'slow_conv_transpose3d': ('slow_conv_transpose3d(Tensor input, Tensor weight, SymIntArrayRef[3] '
                                  'kernel_size, Tensor? bias=None, SymIntArrayRef[3] stride=1, '
                                  'SymIntArrayRef[3] padding=0, SymIntArrayRef[3] output_padding=0, '
                                  'SymIntArrayRef[3] dilation=1, *, Tensor out=None)',),
        'smooth_l1_loss': ('smooth_l1_loss(Tensor input, Tensor target, int64_t '
                           'reduction=at::Reduction::Mean, double beta=1.0, *, Tensor out=None)',),
        'soft_margin_loss': ('soft_margin_loss(Tensor input, Tensor target, int64_t '
                             'reduction=at::Reduction::Mean, *, Tensor out=None)',),
        'softplus': ('softplus(Tensor input, Scalar beta=1, Scalar threshold=20, *, Tensor out=None)',),
        'softshrink': ('softshrink(Tensor input, Scalar lambd=0.5, *, Tensor out=None)',),
        'thnn_conv2d': ('thnn_conv2d(Tensor input, Tensor weight, SymIntArrayRef[2] kernel_size, Tensor? '
                        'bias=None, SymIntArrayRef[2] stride=1, SymIntArrayRef[2] padding=0, *, Tensor '
                        'out=None)',),
        'unflatten_dense_tensors': ('unflatten_dense_tensors(Tensor flat, TensorList tensors)',),
        'upsample_bicubic2d': ('upsample_bicubic2d(Tensor input, SymIntArrayRef? output_size, bool '
                               'align_corners, ArrayRef<double>? scale_factors)',
                               'upsample_bicubic2d(Tensor input, SymIntArrayRef[2] output_size, bool '
                               'align_corners, double? scales_h=None, double? scales_w=None, *, Tensor '
                               'out=None)'),
        'upsample_bilinear2d': ('upsample_bilinear2d(Tensor input, SymIntArrayRef? output_size, bool '
                                'align_corners, ArrayRef<double>? scale_factors)',
                                'upsample_bilinear2d(Tensor input, SymIntArrayRef[2] output_size, bool '
                                'align_corners, double? scales_h=None, double? scales_w=None, *, Tensor '
                                'out=None)'),
        'upsample_linear1d': ('upsample_linear1d(Tensor input, SymIntArrayRef? output_size, bool '
                              'align_corners, ArrayRef<double>? scale_factors)',
                              'upsample_linear1d(Tensor input, SymIntArrayRef[1] output_size, bool '
                              'align_corners, double? scales=None, *, Tensor out=None)'),
        'upsample_nearest1d': ('upsample_nearest1d(Tensor input, SymIntArrayRef? output_size, '
                               'ArrayRef<double>? scale_factors)',
                               'upsample_nearest1d(Tensor input, SymIntArrayRef[1] output_size, double? '
                               'scales=None, *, Tensor out=None)'),
        'upsample_nearest2d': ('upsample_nearest2d(Tensor input, SymIntArrayRef? output_size, '
                               'ArrayRef<double>? scale_factors)',
                               'upsample_nearest2d(Tensor input, SymIntArrayRef[2] output_size, double? '
                               'scales_h=None, double? scales_w=None, *, Tensor out=None)'),
        'upsample_nearest3d': ('upsample_nearest3d(Tensor input, SymIntArrayRef? output_size, '
                               'ArrayRef<double>? scale_factors)',
                               'upsample_nearest3d(Tensor input, SymIntArrayRef[3] output_size, double? '
                               'scales_d=None, double? scales_h=None, double? scales_w=None, *, Tensor '
                               'out=None)'),
        'upsample_trilinear3d': ('upsample_trilinear3d(Tensor input, SymIntArrayRef? output_size, bool '
                                 'align_corners, ArrayRef<double>? scale_factors)',
                                 'upsample_trilinear3d(Tensor input, SymIntArrayRef[3] output_size, bool '
                                 'align_corners, double? scales_d=None, double? scales_h=None, double? '
                                 'scales_w=None, *, Tensor out=None)')},
 'special': {'special_airy_ai': ('special_airy_ai(Tensor x, *, Tensor out=None)',),
             'special_bessel_j0': ('special_bessel_j0(Tensor input, *, Tensor out=None)',),
             'special_bessel_j1': ('special_bessel_j1(Tensor input, *, Tensor out=None)',),
             'special_bessel_y0': ('special_bessel_y0(Tensor input, *, Tensor out=None)',),
             'special_bessel_y1': ('special_bessel_y1(Tensor input, *, Tensor out=None)',),
             'special_chebyshev_polynomial_t': ('special_chebyshev_polynomial_t(Tensor x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_t(Scalar x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_t(Tensor x, Scalar n, *, '
                                                'Tensor out=None)'),
             'special_chebyshev_polynomial_u': ('special_chebyshev_polynomial_u(Tensor x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_u(Scalar x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_u(Tensor x, Scalar n, *, '
                                                'Tensor out=None)'),
             'special_chebyshev_polynomial_v': ('special_chebyshev_polynomial_v(Tensor x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_v(Scalar x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_v(Tensor x, Scalar n, *, '
                                                'Tensor out=None)'),
             'special_chebyshev_polynomial_w': ('special_chebyshev_polynomial_w(Tensor x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_w(Scalar x, Tensor n, *, '
                                                'Tensor out=None)',
                                                'special_chebyshev_polynomial_w(Tensor x, Scalar n, *, '
                                                'Tensor out=None)'),
             'special_digamma': ('special_digamma(Tensor input, *, Tensor out=None)',),
             'special_entr': ('special_entr(Tensor input, *, Tensor out=None)',),
             'special_erf': ('special_erf(Tensor input, *, Tensor out=None)',),
             'special_erfc': ('special_erfc(Tensor input, *, Tensor out=None)',),
             'special_erfcx': ('special_erfcx(Tensor input, *, Tensor out=None)',),
             'special_erfinv': ('special_erfinv(Tensor input, *, Tensor out=None)',),
             'special_exp2': ('special_exp2(Tensor input, *, Tensor out=None)',),
             'special_expit': ('special_expit(Tensor input, *, Tensor out=None)',),
             'special_expm1': ('special_expm1(Tensor input, *, Tensor out=None)',),
             'special_gammainc': ('special_gammainc(Tensor input, Tensor other, *, Tensor out=None)',),
             'special_gammaincc': ('special_gammaincc(Tensor input, Tensor other, *, Tensor out=None)',),
             'special_gammaln': ('special_gammaln(Tensor input, *, Tensor out=None)',),
             'special_hermite_polynomial_h': ('special_hermite_polynomial_h(Tensor x, Tensor n, *, Tensor '
                                              'out=None)',
                                              'special_hermite_polynomial_h(Scalar x, Tensor n, *, Tensor '
                                              'out=None)',
                                              'special_hermite_polynomial_h(Tensor x, Scalar n, *, Tensor '
                                              'out=None)'),
             'special_hermite_polynomial_he': ('special_hermite_polynomial_he(Tensor x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_hermite_polynomial_he(Scalar x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_hermite_polynomial_he(Tensor x, Scalar n, *, Tensor '
                                               'out=None)'),
             'special_i0': ('special_i0(Tensor input, *, Tensor out=None)',),
             'special_i0e': ('special_i0e(Tensor input, *, Tensor out=None)',),
             'special_i1': ('special_i1(Tensor input, *, Tensor out=None)',),
             'special_i1e': ('special_i1e(Tensor input, *, Tensor out=None)',),
             'special_laguerre_polynomial_l': ('special_laguerre_polynomial_l(Tensor x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_laguerre_polynomial_l(Scalar x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_laguerre_polynomial_l(Tensor x, Scalar n, *, Tensor '
                                               'out=None)'),
             'special_legendre_polynomial_p': ('special_legendre_polynomial_p(Tensor x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_legendre_polynomial_p(Scalar x, Tensor n, *, Tensor '
                                               'out=None)',
                                               'special_legendre_polynomial_p(Tensor x, Scalar n, *, Tensor '
                                               'out=None)'),
             'special_log1p': ('special_log1p(Tensor input, *, Tensor out=None)',),
             'special_log_ndtr': ('special_log_ndtr(Tensor input, *, Tensor out=None)',),
             'special_log_softmax': ('special_log_softmax(Tensor input, int64_t dim, *, ScalarType? '
                                     'dtype=None)',),
             'special_logit': ('special_logit(Tensor input, double? eps=None, *, Tensor out=None)',),
             'special_logsumexp': ('special_logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False, '
                                   '*, Tensor out=None)',),
             'special_modified_bessel_i0': ('special_modified_bessel_i0(Tensor input, *, Tensor out=None)',),
             'special_modified_bessel_i1': ('special_modified_bessel_i1(Tensor input, *, Tensor out=None)',),
             'special_modified_bessel_k0': ('special_modified_bessel_k0(Tensor input, *, Tensor out=None)',),
             'special_modified_bessel_k1': ('special_modified_bessel_k1(Tensor input, *, Tensor out=None)',),
             'special_multigammaln': ('special_multigammaln(Tensor input, int64_t p, *, Tensor out=None)',),
             'special_ndtr': ('special_ndtr(Tensor input, *, Tensor out=None)',),
             'special_ndtri': ('special_ndtri(Tensor input, *, Tensor out=None)',),
             'special_polygamma': ('special_polygamma(int64_t n, Tensor input, *, Tensor out=None)',),
             'special_psi': ('special_psi(Tensor input, *, Tensor out=None)',),
             'special_round': ('special_round(Tensor input, *, int64_t decimals=0, Tensor out=None)',),
             'special_scaled_modified_bessel_k0': ('special_scaled_modified_bessel_k0(Tensor x, *, Tensor '
                                                   'out=None)',),
             'special_scaled_modified_bessel_k1': ('special_scaled_modified_bessel_k1(Tensor x, *, Tensor '
                                                   'out=None)',),
             'special_shifted_chebyshev_polynomial_t': ('special_shifted_chebyshev_polynomial_t(Tensor x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_t(Scalar x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_t(Tensor x, '
                                                        'Scalar n, *, Tensor out=None)'),
             'special_shifted_chebyshev_polynomial_u': ('special_shifted_chebyshev_polynomial_u(Tensor x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_u(Scalar x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_u(Tensor x, '
                                                        'Scalar n, *, Tensor out=None)'),
             'special_shifted_chebyshev_polynomial_v': ('special_shifted_chebyshev_polynomial_v(Tensor x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_v(Scalar x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_v(Tensor x, '
                                                        'Scalar n, *, Tensor out=None)'),
             'special_shifted_chebyshev_polynomial_w': ('special_shifted_chebyshev_polynomial_w(Tensor x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_w(Scalar x, '
                                                        'Tensor n, *, Tensor out=None)',
                                                        'special_shifted_chebyshev_polynomial_w(Tensor x, '
                                                        'Scalar n, *, Tensor out=None)'),
             'special_sinc': ('special_sinc(Tensor input, *, Tensor out=None)',),
             'special_softmax': ('special_softmax(Tensor input, int64_t dim, ScalarType? dtype=None)',),
             'special_spherical_bessel_j0': ('special_spherical_bessel_j0(Tensor x, *, Tensor out=None)',),
             'special_xlog1py': ('special_xlog1py(Tensor input, Tensor other, *, Tensor out=None)',
                                 'special_xlog1py(Scalar self, Tensor other, *, Tensor out=None)',
                                 'special_xlog1py(Tensor input, Scalar other, *, Tensor out=None)'),
             'special_xlogy': ('special_xlogy(Tensor input, Tensor other, *, Tensor out=None)',
                               'special_xlogy(Scalar self, Tensor other, *, Tensor out=None)',
                               'special_xlogy(Tensor input, Scalar other, *, Tensor out=None)'),
             'special_zeta': ('special_zeta(Tensor input, Tensor other, *, Tensor out=None)',
                              'special_zeta(Scalar self, Tensor other, *, Tensor out=None)',
                              'special_zeta(Tensor input, Scalar other, *, Tensor out=None)')},
 'torch': {'__and__': ('__and__(Tensor input, Tensor other)', '__and__(Tensor input, Scalar other)'),
           '__lshift__': ('__lshift__(Tensor input, Tensor other)', '__lshift__(Tensor input, Scalar other)'),
           '__or__': ('__or__(Tensor input, Tensor other)', '__or__(Tensor input, Scalar other)'),
           '__rshift__': ('__rshift__(Tensor input, Tensor other)', '__rshift__(Tensor input, Scalar other)'),
           '__xor__': ('__xor__(Tensor input, Tensor other)', '__xor__(Tensor input, Scalar other)'),
           '_adaptive_avg_pool2d': ('_adaptive_avg_pool2d(Tensor input, SymIntArrayRef[2] output_size)',),
           '_adaptive_avg_pool3d': ('_adaptive_avg_pool3d(Tensor input, SymIntArrayRef[3] output_size)',),
           '_add_batch_dim': ('_add_batch_dim(Tensor input, int64_t batch_dim, int64_t level)',),
           '_add_relu': ('_add_relu(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)',
                         '_add_relu(Tensor input, Scalar other, Scalar alpha=1)'),
           '_add_relu_': ('_add_relu_(Tensor input, Tensor other, *, Scalar alpha=1)',
                          '_add_relu_(Tensor input, Scalar other, Scalar alpha=1)'),
           '_addmm_activation': ('_addmm_activation(Tensor input, Tensor mat1, Tensor mat2, *, Scalar '
                                 'beta=1, Scalar alpha=1, bool use_gelu=False, Tensor out=None)',),
           '_aminmax': ('_aminmax(Tensor input)', '_aminmax(Tensor input, int64_t dim, bool keepdim=False)'),
           '_amp_foreach_non_finite_check_and_unscale_': ('_amp_foreach_non_finite_check_and_unscale_(TensorList '
                                                          'self, Tensor found_inf, Tensor inv_scale)',),
           '_amp_update_scale_': ('_amp_update_scale_(Tensor input, Tensor growth_tracker, Tensor found_inf, '
                                  'double scale_growth_factor, double scale_backoff_factor, int64_t '
                                  'growth_interval)',),
           '_assert_async': ('_assert_async(Tensor input)',
                             '_assert_async(Tensor input, c10::string_view assert_msg)'),
           '_assert_scalar': ('_assert_scalar(Scalar self, c10::string_view assert_msg)',),
           '_assert_tensor_metadata': ('_assert_tensor_metadata(Tensor a, SymIntArrayRef? size=None, '
                                       'SymIntArrayRef? stride=None, ScalarType? dtype=None, *, Device? '
                                       'device=None, Layout? layout=None)',),
           '_batch_norm_impl_index': ('_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, '
                                      'Tensor? running_mean, Tensor? running_var, bool training, double '
                                      'momentum, double eps, bool cudnn_enabled)',),
           '_cast_Byte': ('_cast_Byte(Tensor input, bool non_blocking=False)',),
           '_cast_Char': ('_cast_Char(Tensor input, bool non_blocking=False)',),
           '_cast_Double': ('_cast_Double(Tensor input, bool non_blocking=False)',),
           '_cast_Float': ('_cast_Float(Tensor input, bool non_blocking=False)',),
           '_cast_Half': ('_cast_Half(Tensor input, bool non_blocking=False)',),
           '_cast_Int': ('_cast_Int(Tensor input, bool non_blocking=False)',),
           '_cast_Long': ('_cast_Long(Tensor input, bool non_blocking=False)',),
           '_cast_Short': ('_cast_Short(Tensor input, bool non_blocking=False)',),
           '_choose_qparams_per_tensor': ('_choose_qparams_per_tensor(Tensor input, bool '
                                          'reduce_range=False)',),
           '_chunk_cat': ('_chunk_cat(TensorList tensors, int64_t dim, int64_t num_chunks, *, Tensor '
                          'out=None)',),
           '_coalesce': ('_coalesce(Tensor input)',),
           '_compute_linear_combination': ('_compute_linear_combination(Tensor input, Tensor coefficients, '
                                           '*, Tensor out=None)',),
           '_conj': ('_conj(Tensor input)',),
           '_conj_copy': ('_conj_copy(Tensor input, *, Tensor out=None)',),
           '_conj_physical': ('_conj_physical(Tensor input)',),
           '_convert_indices_from_coo_to_csr': ('_convert_indices_from_coo_to_csr(Tensor input, int64_t '
                                                'size, *, bool out_int32=False, Tensor out=None)',),
           '_convert_indices_from_csr_to_coo': ('_convert_indices_from_csr_to_coo(Tensor crow_indices, '
                                                'Tensor col_indices, *, bool out_int32=False, bool '
                                                'transpose=False, Tensor out=None)',),
           '_convert_weight_to_int4pack': ('_convert_weight_to_int4pack(Tensor input, int64_t innerKTiles)',),
           '_convert_weight_to_int4pack_for_cpu': ('_convert_weight_to_int4pack_for_cpu(Tensor input, '
                                                   'int64_t innerKTiles)',),
           '_convolution': ('_convolution(Tensor input, Tensor weight, Tensor? bias, SymIntArrayRef stride, '
                            'SymIntArrayRef padding, SymIntArrayRef dilation, bool transposed, IntArrayRef '
                            'output_padding, SymInt groups, bool benchmark, bool deterministic, bool '
                            'cudnn_enabled)',
                            '_convolution(Tensor input, Tensor weight, Tensor? bias, SymIntArrayRef stride, '
                            'SymIntArrayRef padding, SymIntArrayRef dilation, bool transposed, '
                            'SymIntArrayRef output_padding, SymInt groups, bool benchmark, bool '
                            'deterministic, bool cudnn_enabled, bool allow_tf32)'),
           '_convolution_mode': ('_convolution_mode(Tensor input, Tensor weight, Tensor? bias, '
                                 'SymIntArrayRef stride, c10::string_view padding, SymIntArrayRef dilation, '
                                 'SymInt groups)',),
           '_copy_from': ('_copy_from(Tensor input, Tensor dst, bool non_blocking=False)',),
           '_copy_from_and_resize': ('_copy_from_and_resize(Tensor input, Tensor dst)',),
           '_cslt_compress': ('_cslt_compress(Tensor input)',),
           '_cslt_sparse_mm': ('_cslt_sparse_mm(Tensor compressed_A, Tensor dense_B, Tensor? bias=None, '
                               'Tensor? alpha=None, ScalarType? out_dtype=None, bool transpose_result=False, '
                               'int64_t alg_id=0, int64_t split_k=1, int64_t split_k_mode=-1)',),
           '_cslt_sparse_mm_search': ('_cslt_sparse_mm_search(Tensor compressed_A, Tensor dense_B, Tensor? '
                                      'bias=None, Tensor? alpha=None, ScalarType? out_dtype=None, bool '
                                      'transpose_result=False)',),
           '_ctc_loss': ('_ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef input_lengths, IntArrayRef '
                         'target_lengths, int64_t blank=0, bool zero_infinity=False)',
                         '_ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor '
                         'target_lengths, int64_t blank=0, bool zero_infinity=False)'),
           '_cudnn_ctc_loss': ('_cudnn_ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef input_lengths, '
                               'IntArrayRef target_lengths, int64_t blank, bool deterministic, bool '
                               'zero_infinity)',
                               '_cudnn_ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, '
                               'Tensor target_lengths, int64_t blank, bool deterministic, bool '
                               'zero_infinity)'),
           '_cudnn_init_dropout_state': ('_cudnn_init_dropout_state(double dropout, bool train, int64_t '
                                         'dropout_seed, *, ScalarType? dtype=None, Layout? layout=None, '
                                         'Device? device=None, bool? pin_memory=False, bool? '
                                         'requires_grad=False)',),
           '_cudnn_rnn': ('_cudnn_rnn(Tensor input, TensorList weight, int64_t weight_stride0, Tensor? '
                          'weight_buf, Tensor hx, Tensor? cx, int64_t mode, SymInt hidden_size, SymInt '
                          'proj_size, int64_t num_layers, bool batch_first, double dropout, bool train, bool '
                          'bidirectional, SymIntArrayRef batch_sizes, Tensor? dropout_state)',),
           '_cudnn_rnn_flatten_weight': ('_cudnn_rnn_flatten_weight(TensorList weight_arr, int64_t '
                                         'weight_stride0, SymInt input_size, int64_t mode, SymInt '
                                         'hidden_size, SymInt proj_size, int64_t num_layers, bool '
                                         'batch_first, bool bidirectional)',),
           '_cufft_clear_plan_cache': ('_cufft_clear_plan_cache(DeviceIndex device_index)',),
           '_cufft_get_plan_cache_max_size': ('_cufft_get_plan_cache_max_size(DeviceIndex device_index)',),
           '_cufft_get_plan_cache_size': ('_cufft_get_plan_cache_size(DeviceIndex device_index)',),
           '_cufft_set_plan_cache_max_size': ('_cufft_set_plan_cache_max_size(DeviceIndex device_index, '
                                              'int64_t max_size)',),
           '_cummax_helper': ('_cummax_helper(Tensor input, Tensor values, Tensor indices, int64_t dim)',),
           '_cummin_helper': ('_cummin_helper(Tensor input, Tensor values, Tensor indices, int64_t dim)',),
           '_debug_has_internal_overlap': ('_debug_has_internal_overlap(Tensor input)',),
           '_dim_arange': ('_dim_arange(Tensor like, int64_t dim)',),
           '_dirichlet_grad': ('_dirichlet_grad(Tensor x, Tensor alpha, Tensor total)',),
           '_dyn_quant_matmul_4bit': ('_dyn_quant_matmul_4bit(Tensor inp, Tensor packed_weights, int64_t '
                                      'block_size, int64_t in_features, int64_t out_features)',),
           '_dyn_quant_pack_4bit_weight': ('_dyn_quant_pack_4bit_weight(Tensor weights, Tensor scales_zeros, '
                                           'Tensor? bias, int64_t block_size, int64_t in_features, int64_t '
                                           'out_features)',),
           '_efficientzerotensor': ('_efficientzerotensor(SymIntArrayRef size, *, ScalarType? dtype=None, '
                                    'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                                    'requires_grad=False)',),
           '_embedding_bag': ('_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool '
                              'scale_grad_by_freq=False, int64_t mode=0, bool sparse=False, Tensor? '
                              'per_sample_weights=None, bool include_last_offset=False, int64_t '
                              'padding_idx=-1)',),
           '_embedding_bag_forward_only': ('_embedding_bag_forward_only(Tensor weight, Tensor indices, '
                                           'Tensor offsets, bool scale_grad_by_freq=False, int64_t mode=0, '
                                           'bool sparse=False, Tensor? per_sample_weights=None, bool '
                                           'include_last_offset=False, int64_t padding_idx=-1)',),
           '_empty_affine_quantized': ('_empty_affine_quantized(SymIntArrayRef size, *, double scale=1, '
                                       'int64_t zero_point=0, MemoryFormat? '
                                       'memory_format=c10::MemoryFormat::Contiguous, ScalarType? dtype=None, '
                                       'Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                                       'bool? requires_grad=False)',),
           '_empty_per_channel_affine_quantized': ('_empty_per_channel_affine_quantized(SymIntArrayRef size, '
                                                   '*, Tensor scales, Tensor zero_points, int64_t axis, '
                                                   'MemoryFormat? '
                                                   'memory_format=c10::MemoryFormat::Contiguous, ScalarType? '
                                                   'dtype=None, Layout? layout=None, Device? device=None, '
                                                   'bool? pin_memory=False, bool? requires_grad=False)',),
           '_euclidean_dist': ('_euclidean_dist(Tensor x1, Tensor x2)',),
           '_fake_quantize_learnable_per_channel_affine': ('_fake_quantize_learnable_per_channel_affine(Tensor '
                                                           'input, Tensor scale, Tensor zero_point, int64_t '
                                                           'axis, int64_t quant_min, int64_t quant_max, '
                                                           'double grad_factor=1.0)',),
           '_fake_quantize_learnable_per_tensor_affine': ('_fake_quantize_learnable_per_tensor_affine(Tensor '
                                                          'input, Tensor scale, Tensor zero_point, int64_t '
                                                          'quant_min, int64_t quant_max, double '
                                                          'grad_factor=1.0)',),
           '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams': ('_fake_quantize_per_tensor_affine_cachemask_tensor_qparams(Tensor '
                                                                         'input, Tensor scale, Tensor '
                                                                         'zero_point, Tensor '
                                                                         'fake_quant_enabled, int64_t '
                                                                         'quant_min, int64_t quant_max)',),
           '_fft_c2c': ('_fft_c2c(Tensor input, SymIntArrayRef dim, int64_t normalization, bool forward, *, '
                        'Tensor out=None)',),
           '_fft_c2r': ('_fft_c2r(Tensor input, IntArrayRef dim, int64_t normalization, SymInt '
                        'last_dim_size, *, Tensor out=None)',),
           '_fft_r2c': ('_fft_r2c(Tensor input, IntArrayRef dim, int64_t normalization, bool onesided, *, '
                        'Tensor out=None)',),
           '_fill_mem_eff_dropout_mask_': ('_fill_mem_eff_dropout_mask_(Tensor input, double dropout_p, '
                                           'int64_t seed, int64_t offset)',),
           '_flash_attention_forward_no_dropout_inplace': ('_flash_attention_forward_no_dropout_inplace(Tensor '
                                                           'out, Tensor query, Tensor key, Tensor value, '
                                                           'Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt '
                                                           'max_q, SymInt max_k, double dropout_p, bool '
                                                           'is_causal, bool return_debug_mask, *, double? '
                                                           'scale=None, SymInt? window_size_left=None, '
                                                           'SymInt? window_size_right=None, Tensor? '
                                                           'seqused_k=None, Tensor? alibi_slopes=None, '
                                                           'Tensor? block_table=None, int64_t? '
                                                           'num_splits=None)',),
           '_foobar': ('_foobar(Tensor input, bool arg1=True, bool arg2=True, *, bool arg3=True)',),
           '_foreach_abs': ('_foreach_abs(TensorList self)',),
           '_foreach_abs_': ('_foreach_abs_(TensorList self)',),
           '_foreach_acos': ('_foreach_acos(TensorList self)',),
           '_foreach_acos_': ('_foreach_acos_(TensorList self)',),
           '_foreach_add': ('_foreach_add(TensorList self, Scalar scalar)',
                            '_foreach_add(TensorList self, ScalarList scalars)',
                            '_foreach_add(TensorList self, Tensor other, *, Scalar alpha=1)',
                            '_foreach_add(TensorList self, TensorList other, *, Scalar alpha=1)'),
           '_foreach_add_': ('_foreach_add_(TensorList self, Scalar scalar)',
                             '_foreach_add_(TensorList self, ScalarList scalars)',
                             '_foreach_add_(TensorList self, Tensor other, *, Scalar alpha=1)',
                             '_foreach_add_(TensorList self, TensorList other, *, Scalar alpha=1)'),
           '_foreach_addcdiv': ('_foreach_addcdiv(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'ScalarList scalars)',
                                '_foreach_addcdiv(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'Tensor scalars)',
                                '_foreach_addcdiv(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'Scalar value=1)'),
           '_foreach_addcdiv_': ('_foreach_addcdiv_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'ScalarList scalars)',
                                 '_foreach_addcdiv_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'Tensor scalars)',
                                 '_foreach_addcdiv_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'Scalar value=1)'),
           '_foreach_addcmul': ('_foreach_addcmul(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'ScalarList scalars)',
                                '_foreach_addcmul(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'Tensor scalars)',
                                '_foreach_addcmul(TensorList self, TensorList tensor1, TensorList tensor2, '
                                'Scalar value=1)'),
           '_foreach_addcmul_': ('_foreach_addcmul_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'ScalarList scalars)',
                                 '_foreach_addcmul_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'Tensor scalars)',
                                 '_foreach_addcmul_(TensorList self, TensorList tensor1, TensorList tensor2, '
                                 'Scalar value=1)'),
           '_foreach_asin': ('_foreach_asin(TensorList self)',),
           '_foreach_asin_': ('_foreach_asin_(TensorList self)',),
           '_foreach_atan': ('_foreach_atan(TensorList self)',),
           '_foreach_atan_': ('_foreach_atan_(TensorList self)',),
           '_foreach_ceil': ('_foreach_ceil(TensorList self)',),
           '_foreach_ceil_': ('_foreach_ceil_(TensorList self)',),
           '_foreach_clamp_max': ('_foreach_clamp_max(TensorList self, Scalar scalar)',
                                  '_foreach_clamp_max(TensorList self, ScalarList scalars)',
                                  '_foreach_clamp_max(TensorList self, TensorList other)'),
           '_foreach_clamp_max_': ('_foreach_clamp_max_(TensorList self, Scalar scalar)',
                                   '_foreach_clamp_max_(TensorList self, ScalarList scalars)',
                                   '_foreach_clamp_max_(TensorList self, TensorList other)'),
           '_foreach_clamp_min': ('_foreach_clamp_min(TensorList self, Scalar scalar)',
                                  '_foreach_clamp_min(TensorList self, ScalarList scalars)',
                                  '_foreach_clamp_min(TensorList self, TensorList other)'),
           '_foreach_clamp_min_': ('_foreach_clamp_min_(TensorList self, Scalar scalar)',
                                   '_foreach_clamp_min_(TensorList self, ScalarList scalars)',
                                   '_foreach_clamp_min_(TensorList self, TensorList other)'),
           '_foreach_clone': ('_foreach_clone(TensorList self, *, MemoryFormat? memory_format=None)',),
           '_foreach_copy_': ('_foreach_copy_(TensorList self, TensorList src, bool non_blocking=False)',),
           '_foreach_cos': ('_foreach_cos(TensorList self)',),
           '_foreach_cos_': ('_foreach_cos_(TensorList self)',),
           '_foreach_cosh': ('_foreach_cosh(TensorList self)',),
           '_foreach_cosh_': ('_foreach_cosh_(TensorList self)',),
           '_foreach_div': ('_foreach_div(TensorList self, ScalarList scalars)',
                            '_foreach_div(TensorList self, Tensor other)',
                            '_foreach_div(TensorList self, TensorList other)',
                            '_foreach_div(TensorList self, Scalar scalar)'),
           '_foreach_div_': ('_foreach_div_(TensorList self, ScalarList scalars)',
                             '_foreach_div_(TensorList self, Tensor other)',
                             '_foreach_div_(TensorList self, TensorList other)',
                             '_foreach_div_(TensorList self, Scalar scalar)'),
           '_foreach_erf': ('_foreach_erf(TensorList self)',),
           '_foreach_erf_': ('_foreach_erf_(TensorList self)',),
           '_foreach_erfc': ('_foreach_erfc(TensorList self)',),
           '_foreach_erfc_': ('_foreach_erfc_(TensorList self)',),
           '_foreach_exp': ('_foreach_exp(TensorList self)',),
           '_foreach_exp_': ('_foreach_exp_(TensorList self)',),
           '_foreach_expm1': ('_foreach_expm1(TensorList self)',),
           '_foreach_expm1_': ('_foreach_expm1_(TensorList self)',),
           '_foreach_floor': ('_foreach_floor(TensorList self)',),
           '_foreach_floor_': ('_foreach_floor_(TensorList self)',),
           '_foreach_frac': ('_foreach_frac(TensorList self)',),
           '_foreach_frac_': ('_foreach_frac_(TensorList self)',),
           '_foreach_lerp': ('_foreach_lerp(TensorList self, TensorList tensors1, Scalar weight)',
                             '_foreach_lerp(TensorList self, TensorList tensors1, ScalarList weight)',
                             '_foreach_lerp(TensorList self, TensorList tensors1, TensorList weights)'),
           '_foreach_lerp_': ('_foreach_lerp_(TensorList self, TensorList tensors1, Scalar weight)',
                              '_foreach_lerp_(TensorList self, TensorList tensors1, ScalarList weight)',
                              '_foreach_lerp_(TensorList self, TensorList tensors1, TensorList weights)'),
           '_foreach_lgamma': ('_foreach_lgamma(TensorList self)',),
           '_foreach_lgamma_': ('_foreach_lgamma_(TensorList self)',),
           '_foreach_log': ('_foreach_log(TensorList self)',),
           '_foreach_log10': ('_foreach_log10(TensorList self)',),
           '_foreach_log10_': ('_foreach_log10_(TensorList self)',),
           '_foreach_log1p': ('_foreach_log1p(TensorList self)',),
           '_foreach_log1p_': ('_foreach_log1p_(TensorList self)',),
           '_foreach_log2': ('_foreach_log2(TensorList self)',),
           '_foreach_log2_': ('_foreach_log2_(TensorList self)',),
           '_foreach_log_': ('_foreach_log_(TensorList self)',),
           '_foreach_max': ('_foreach_max(TensorList self)',),
           '_foreach_maximum': ('_foreach_maximum(TensorList self, Scalar scalar)',
                                '_foreach_maximum(TensorList self, ScalarList scalars)',
                                '_foreach_maximum(TensorList self, TensorList other)'),
           '_foreach_maximum_': ('_foreach_maximum_(TensorList self, Scalar scalar)',
                                 '_foreach_maximum_(TensorList self, ScalarList scalars)',
                                 '_foreach_maximum_(TensorList self, TensorList other)'),
           '_foreach_minimum': ('_foreach_minimum(TensorList self, Scalar scalar)',
                                '_foreach_minimum(TensorList self, ScalarList scalars)',
                                '_foreach_minimum(TensorList self, TensorList other)'),
           '_foreach_minimum_': ('_foreach_minimum_(TensorList self, Scalar scalar)',
                                 '_foreach_minimum_(TensorList self, ScalarList scalars)',
                                 '_foreach_minimum_(TensorList self, TensorList other)'),
           '_foreach_mm': ('_foreach_mm(TensorList self, TensorList mat2)',),
           '_foreach_mul': ('_foreach_mul(TensorList self, ScalarList scalars)',
                            '_foreach_mul(TensorList self, Tensor other)',
                            '_foreach_mul(TensorList self, TensorList other)',
                            '_foreach_mul(TensorList self, Scalar scalar)'),
           '_foreach_mul_': ('_foreach_mul_(TensorList self, ScalarList scalars)',
                             '_foreach_mul_(TensorList self, Tensor other)',
                             '_foreach_mul_(TensorList self, TensorList other)',
                             '_foreach_mul_(TensorList self, Scalar scalar)'),
           '_foreach_neg': ('_foreach_neg(TensorList self)',),
           '_foreach_neg_': ('_foreach_neg_(TensorList self)',),
           '_foreach_norm': ('_foreach_norm(TensorList self, Scalar ord=2, ScalarType? dtype=None)',),
           '_foreach_pow': ('_foreach_pow(Scalar self, TensorList exponent)',
                            '_foreach_pow(TensorList self, Scalar exponent)',
                            '_foreach_pow(TensorList self, ScalarList exponent)',
                            '_foreach_pow(TensorList self, TensorList exponent)'),
           '_foreach_pow_': ('_foreach_pow_(TensorList self, Scalar exponent)',
                             '_foreach_pow_(TensorList self, ScalarList exponent)',
                             '_foreach_pow_(TensorList self, TensorList exponent)'),
           '_foreach_powsum': ('_foreach_powsum(TensorList self, Scalar ord=2, ScalarType? dtype=None)',),
           '_foreach_reciprocal': ('_foreach_reciprocal(TensorList self)',),
           '_foreach_reciprocal_': ('_foreach_reciprocal_(TensorList self)',),
           '_foreach_round': ('_foreach_round(TensorList self)',),
           '_foreach_round_': ('_foreach_round_(TensorList self)',),
           '_foreach_rsqrt': ('_foreach_rsqrt(TensorList self)',),
           '_foreach_rsqrt_': ('_foreach_rsqrt_(TensorList self)',),
           '_foreach_sigmoid': ('_foreach_sigmoid(TensorList self)',),
           '_foreach_sigmoid_': ('_foreach_sigmoid_(TensorList self)',),
           '_foreach_sign': ('_foreach_sign(TensorList self)',),
           '_foreach_sign_': ('_foreach_sign_(TensorList self)',),
           '_foreach_sin': ('_foreach_sin(TensorList self)',),
           '_foreach_sin_': ('_foreach_sin_(TensorList self)',),
           '_foreach_sinh': ('_foreach_sinh(TensorList self)',),
           '_foreach_sinh_': ('_foreach_sinh_(TensorList self)',),
           '_foreach_sqrt': ('_foreach_sqrt(TensorList self)',),
           '_foreach_sqrt_': ('_foreach_sqrt_(TensorList self)',),
           '_foreach_sub': ('_foreach_sub(TensorList self, Scalar scalar)',
                            '_foreach_sub(TensorList self, ScalarList scalars)',
                            '_foreach_sub(TensorList self, TensorList other, *, Scalar alpha=1)'),
           '_foreach_sub_': ('_foreach_sub_(TensorList self, Scalar scalar)',
                             '_foreach_sub_(TensorList self, ScalarList scalars)',
                             '_foreach_sub_(TensorList self, TensorList other, *, Scalar alpha=1)'),
           '_foreach_tan': ('_foreach_tan(TensorList self)',),
           '_foreach_tan_': ('_foreach_tan_(TensorList self)',),
           '_foreach_tanh': ('_foreach_tanh(TensorList self)',),
           '_foreach_tanh_': ('_foreach_tanh_(TensorList self)',),
           '_foreach_trunc': ('_foreach_trunc(TensorList self)',),
           '_foreach_trunc_': ('_foreach_trunc_(TensorList self)',),
           '_foreach_zero_': ('_foreach_zero_(TensorList self)',),
           '_functional_assert_async': ('_functional_assert_async(Tensor input, c10::string_view assert_msg, '
                                        'Tensor dep_token)',),
           '_functional_assert_scalar': ('_functional_assert_scalar(Scalar self, c10::string_view '
                                         'assert_msg, Tensor dep_token)',),
           '_functional_sym_constrain_range': ('_functional_sym_constrain_range(Scalar size, int64_t? min, '
                                               'int64_t? max, Tensor dep_token)',),
           '_functional_sym_constrain_range_for_size': ('_functional_sym_constrain_range_for_size(Scalar '
                                                        'size, int64_t? min, int64_t? max, Tensor '
                                                        'dep_token)',),
           '_fused_adagrad_': ('_fused_adagrad_(TensorList self, TensorList grads, TensorList state_sums, '
                               'TensorList state_steps, *, Tensor lr, double lr_decay, double weight_decay, '
                               'double eps, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None)',
                               '_fused_adagrad_(TensorList self, TensorList grads, TensorList state_sums, '
                               'TensorList state_steps, *, double lr, double lr_decay, double weight_decay, '
                               'double eps, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None)'),
           '_fused_adam_': ('_fused_adam_(TensorList self, TensorList grads, TensorList exp_avgs, TensorList '
                            'exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, *, Tensor lr, '
                            'double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool '
                            'maximize, Tensor? grad_scale=None, Tensor? found_inf=None)',
                            '_fused_adam_(TensorList self, TensorList grads, TensorList exp_avgs, TensorList '
                            'exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, *, double lr, '
                            'double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool '
                            'maximize, Tensor? grad_scale=None, Tensor? found_inf=None)'),
           '_fused_adamw_': ('_fused_adamw_(TensorList self, TensorList grads, TensorList exp_avgs, '
                             'TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, *, '
                             'Tensor lr, double beta1, double beta2, double weight_decay, double eps, bool '
                             'amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None)',
                             '_fused_adamw_(TensorList self, TensorList grads, TensorList exp_avgs, '
                             'TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, *, '
                             'double lr, double beta1, double beta2, double weight_decay, double eps, bool '
                             'amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None)'),
           '_fused_dropout': ('_fused_dropout(Tensor input, double p, Generator? generator=None)',),
           '_fused_moving_avg_obs_fq_helper': ('_fused_moving_avg_obs_fq_helper(Tensor input, Tensor '
                                               'observer_on, Tensor fake_quant_on, Tensor running_min, '
                                               'Tensor running_max, Tensor scale, Tensor zero_point, double '
                                               'averaging_const, int64_t quant_min, int64_t quant_max, '
                                               'int64_t ch_axis, bool per_row_fake_quant=False, bool '
                                               'symmetric_quant=False)',),
           '_fused_rms_norm': ('_fused_rms_norm(Tensor input, IntArrayRef normalized_shape, Tensor? weight, '
                               'double? eps)',),
           '_fused_sdp_choice': ('_fused_sdp_choice(Tensor query, Tensor key, Tensor value, Tensor? '
                                 'attn_mask=None, double dropout_p=0.0, bool is_causal=False, *, double? '
                                 'scale=None, bool enable_gqa=False)',),
           '_fused_sgd_': ('_fused_sgd_(TensorList self, TensorList grads, TensorList momentum_buffer_list, '
                           '*, double weight_decay, double momentum, Tensor lr, double dampening, bool '
                           'nesterov, bool maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? '
                           'found_inf=None)',
                           '_fused_sgd_(TensorList self, TensorList grads, TensorList momentum_buffer_list, '
                           '*, double weight_decay, double momentum, double lr, double dampening, bool '
                           'nesterov, bool maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? '
                           'found_inf=None)'),
           '_fw_primal_copy': ('_fw_primal_copy(Tensor input, int64_t level, *, Tensor out=None)',),
           '_grid_sampler_2d_cpu_fallback': ('_grid_sampler_2d_cpu_fallback(Tensor input, Tensor grid, '
                                             'int64_t interpolation_mode, int64_t padding_mode, bool '
                                             'align_corners)',),
           '_grouped_mm': ('_grouped_mm(Tensor input, Tensor mat2, Tensor? offs=None, Tensor? bias=None, '
                           'ScalarType? out_dtype=None)',),
           '_has_compatible_shallow_copy_type': ('_has_compatible_shallow_copy_type(Tensor input, Tensor '
                                                 'from)',),
           '_histogramdd_bin_edges': ('_histogramdd_bin_edges(Tensor input, IntArrayRef bins, *, '
                                      'ArrayRef<double>? range=None, Tensor? weight=None, bool '
                                      'density=False)',),
           '_histogramdd_from_bin_cts': ('_histogramdd_from_bin_cts(Tensor input, IntArrayRef bins, *, '
                                         'ArrayRef<double>? range=None, Tensor? weight=None, bool '
                                         'density=False)',),
           '_histogramdd_from_bin_tensors': ('_histogramdd_from_bin_tensors(Tensor input, TensorList bins, '
                                             '*, Tensor? weight=None, bool density=False)',),
           '_index_put_impl_': ('_index_put_impl_(Tensor input, c10::List<::std::optional<Tensor>> indices, '
                                'Tensor values, bool accumulate=False, bool unsafe=False)',),
           '_indices_copy': ('_indices_copy(Tensor input, *, Tensor out=None)',),
           '_int_mm': ('_int_mm(Tensor input, Tensor mat2, *, Tensor out=None)',),
           '_is_all_true': ('_is_all_true(Tensor input)',),
           '_is_any_true': ('_is_any_true(Tensor input)',),
           '_is_zerotensor': ('_is_zerotensor(Tensor input)',),
           '_lazy_clone': ('_lazy_clone(Tensor input)',),
           '_linalg_check_errors': ('_linalg_check_errors(Tensor info, c10::string_view api_name, *, bool '
                                    'is_matrix)',),
           '_linalg_det': ('_linalg_det(Tensor A, *, TensorList[3] out=None)',),
           '_linalg_eigh': ('_linalg_eigh(Tensor A, c10::string_view UPLO="L", bool compute_v=True, *, '
                            'TensorList[2] out=None)',),
           '_linalg_slogdet': ('_linalg_slogdet(Tensor A, *, TensorList[4] out=None)',),
           '_linalg_solve_ex': ('_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool '
                                'check_errors=False, TensorList[4] out=None)',),
           '_linalg_svd': ('_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, '
                           'c10::string_view? driver=None, TensorList[3] out=None)',),
           '_log_softmax': ('_log_softmax(Tensor input, int64_t dim, bool half_to_float, *, Tensor '
                            'out=None)',),
           '_log_softmax_backward_data': ('_log_softmax_backward_data(Tensor grad_output, Tensor output, '
                                          'int64_t dim, ScalarType input_dtype, *, Tensor out=None)',),
           '_logcumsumexp': ('_logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)',),
           '_lstm_mps': ('_lstm_mps(Tensor input, TensorList hx, TensorList params, bool has_biases, int64_t '
                         'num_layers, double dropout, bool train, bool bidirectional, bool batch_first)',),
           '_lu_with_info': ('_lu_with_info(Tensor input, bool pivot=True, bool check_errors=True)',),
           '_make_dep_token': ('_make_dep_token(*, MemoryFormat? memory_format=None, ScalarType? dtype=None, '
                               'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                               'requires_grad=False)',),
           '_make_dual': ('_make_dual(Tensor primal, Tensor tangent, int64_t level)',),
           '_make_dual_copy': ('_make_dual_copy(Tensor primal, Tensor tangent, int64_t level, *, Tensor '
                               'out=None)',),
           '_make_per_channel_quantized_tensor': ('_make_per_channel_quantized_tensor(Tensor input, Tensor '
                                                  'scale, Tensor zero_point, int64_t axis)',),
           '_make_per_tensor_quantized_tensor': ('_make_per_tensor_quantized_tensor(Tensor input, double '
                                                 'scale, int64_t zero_point)',),
           '_masked_scale': ('_masked_scale(Tensor input, Tensor mask, double scale)',),
           '_masked_softmax': ('_masked_softmax(Tensor input, Tensor mask, int64_t? dim=None, int64_t? '
                               'mask_type=None)',),
           '_mixed_dtypes_linear': ('_mixed_dtypes_linear(Tensor input, Tensor weight, Tensor scale, *, '
                                    'Tensor? bias=None, c10::string_view? activation=None)',),
           '_mkldnn_reshape': ('_mkldnn_reshape(Tensor input, IntArrayRef shape)',),
           '_mkldnn_transpose': ('_mkldnn_transpose(Tensor input, int64_t dim0, int64_t dim1)',),
           '_mkldnn_transpose_': ('_mkldnn_transpose_(Tensor input, int64_t dim0, int64_t dim1)',),
           '_mps_convolution': ('_mps_convolution(Tensor input, Tensor weight, Tensor? bias, SymIntArrayRef '
                                'padding, SymIntArrayRef stride, SymIntArrayRef dilation, SymInt groups)',),
           '_mps_convolution_transpose': ('_mps_convolution_transpose(Tensor input, Tensor weight, '
                                          'SymIntArrayRef padding, SymIntArrayRef output_padding, '
                                          'SymIntArrayRef stride, SymIntArrayRef dilation, SymInt groups)',),
           '_native_batch_norm_legit': ('_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? '
                                        'bias, Tensor running_mean, Tensor running_var, bool training, '
                                        'double momentum, double eps, *, TensorList[3] out=None)',
                                        '_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? '
                                        'bias, bool training, double momentum, double eps, *, TensorList[3] '
                                        'out=None)'),
           '_native_batch_norm_legit_no_training': ('_native_batch_norm_legit_no_training(Tensor input, '
                                                    'Tensor? weight, Tensor? bias, Tensor running_mean, '
                                                    'Tensor running_var, double momentum, double eps)',),
           '_native_multi_head_attention': ('_native_multi_head_attention(Tensor query, Tensor key, Tensor '
                                            'value, int64_t embed_dim, int64_t num_head, Tensor qkv_weight, '
                                            'Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? '
                                            'mask=None, bool need_weights=True, bool '
                                            'average_attn_weights=True, int64_t? mask_type=None)',),
           '_neg_view': ('_neg_view(Tensor input)',),
           '_neg_view_copy': ('_neg_view_copy(Tensor input, *, Tensor out=None)',),
           '_nested_compute_contiguous_strides_offsets': ('_nested_compute_contiguous_strides_offsets(Tensor '
                                                          'nested_size)',),
           '_nested_from_padded': ('_nested_from_padded(Tensor padded, Tensor cpu_nested_shape_example, bool '
                                   'fuse_transform_0213=False)',),
           '_nested_from_padded_and_nested_example': ('_nested_from_padded_and_nested_example(Tensor padded, '
                                                      'Tensor nt_example)',),
           '_nested_from_padded_tensor': ('_nested_from_padded_tensor(Tensor padded, Tensor offsets, Tensor '
                                          'dummy, int64_t ragged_idx=1, Tensor? min_seqlen=None, Tensor? '
                                          'max_seqlen=None, SymInt? sum_S=None)',),
           '_nested_get_jagged_dummy': ('_nested_get_jagged_dummy(Tensor any)',),
           '_nested_get_lengths': ('_nested_get_lengths(Tensor input)',),
           '_nested_get_max_seqlen': ('_nested_get_max_seqlen(Tensor input)',),
           '_nested_get_min_seqlen': ('_nested_get_min_seqlen(Tensor input)',),
           '_nested_get_offsets': ('_nested_get_offsets(Tensor input)',),
           '_nested_get_ragged_idx': ('_nested_get_ragged_idx(Tensor input)',),
           '_nested_get_values': ('_nested_get_values(Tensor input)',),
           '_nested_get_values_copy': ('_nested_get_values_copy(Tensor input, *, Tensor out=None)',),
           '_nested_tensor_from_mask': ('_nested_tensor_from_mask(Tensor t, Tensor mask, bool '
                                        'mask_check=True)',),
           '_nested_tensor_from_mask_left_aligned': ('_nested_tensor_from_mask_left_aligned(Tensor t, Tensor '
                                                     'mask)',),
           '_nested_tensor_from_tensor_list': ('_nested_tensor_from_tensor_list(TensorList list, ScalarType? '
                                               'dtype=None, Layout? layout=None, Device? device=None, bool? '
                                               'pin_memory=None)',),
           '_nested_tensor_softmax_with_shape': ('_nested_tensor_softmax_with_shape(Tensor input, Tensor '
                                                 'query)',),
           '_nested_view_from_buffer': ('_nested_view_from_buffer(Tensor input, Tensor nested_size, Tensor '
                                        'nested_strides, Tensor offsets)',),
           '_nested_view_from_buffer_copy': ('_nested_view_from_buffer_copy(Tensor input, Tensor '
                                             'nested_size, Tensor nested_strides, Tensor offsets, *, Tensor '
                                             'out=None)',),
           '_nested_view_from_jagged': ('_nested_view_from_jagged(Tensor input, Tensor offsets, Tensor '
                                        'dummy, Tensor? lengths=None, int64_t ragged_idx=1, Tensor? '
                                        'min_seqlen=None, Tensor? max_seqlen=None)',),
           '_nested_view_from_jagged_copy': ('_nested_view_from_jagged_copy(Tensor input, Tensor offsets, '
                                             'Tensor dummy, Tensor? lengths=None, int64_t ragged_idx=1, '
                                             'Tensor? min_seqlen=None, Tensor? max_seqlen=None, *, Tensor '
                                             'out=None)',),
           '_nnpack_spatial_convolution': ('_nnpack_spatial_convolution(Tensor input, Tensor weight, Tensor? '
                                           'bias, SymIntArrayRef[2] padding, SymIntArrayRef[2] stride=1)',),
           '_pack_padded_sequence': ('_pack_padded_sequence(Tensor input, Tensor lengths, bool '
                                     'batch_first)',),
           '_pad_packed_sequence': ('_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, '
                                    'Scalar padding_value, int64_t total_length)',),
           '_philox_key_fold_in': ('_philox_key_fold_in(Tensor key, int64_t data)',),
           '_philox_key_split': ('_philox_key_split(Tensor key, int64_t num_splits)',),
           '_philox_normal_': ('_philox_normal_(Tensor input, Tensor key, double mean=0, double std=1)',),
           '_philox_uniform_': ('_philox_uniform_(Tensor input, Tensor key, double low=0, double high=1)',),
           '_pin_memory': ('_pin_memory(Tensor input, Device? device=None)',),
           '_prelu_kernel': ('_prelu_kernel(Tensor input, Tensor weight)',),
           '_print': ('_print(c10::string_view s)',),
           '_propagate_xla_data': ('_propagate_xla_data(Tensor input, Tensor output)',),
           '_remove_batch_dim': ('_remove_batch_dim(Tensor input, int64_t level, SymInt batch_size, int64_t '
                                 'out_dim)',),
           '_reshape_alias_copy': ('_reshape_alias_copy(Tensor input, SymIntArrayRef size, SymIntArrayRef '
                                   'stride, *, Tensor out=None)',),
           '_reshape_from_tensor': ('_reshape_from_tensor(Tensor input, Tensor shape)',),
           '_resize_output_': ('_resize_output_(Tensor input, SymIntArrayRef size, Device device)',),
           '_rowwise_prune': ('_rowwise_prune(Tensor weight, Tensor mask, ScalarType '
                              'compressed_indices_dtype)',),
           '_safe_softmax': ('_safe_softmax(Tensor input, int64_t dim, ScalarType? dtype=None)',),
           '_sample_dirichlet': ('_sample_dirichlet(Tensor input, Generator? generator=None)',),
           '_saturate_weight_to_fp16': ('_saturate_weight_to_fp16(Tensor weight)',),
           '_scaled_dot_product_attention_math': ('_scaled_dot_product_attention_math(Tensor query, Tensor '
                                                  'key, Tensor value, Tensor? attn_mask=None, double '
                                                  'dropout_p=0.0, bool is_causal=False, Tensor? '
                                                  'dropout_mask=None, *, double? scale=None, bool '
                                                  'enable_gqa=False)',),
           '_scaled_dot_product_attention_math_for_mps': ('_scaled_dot_product_attention_math_for_mps(Tensor '
                                                          'query, Tensor key, Tensor value, Tensor? '
                                                          'attn_mask=None, double dropout_p=0.0, bool '
                                                          'is_causal=False, Tensor? dropout_mask=None, *, '
                                                          'double? scale=None, bool enable_gqa=False)',),
           '_scaled_dot_product_cudnn_attention': ('_scaled_dot_product_cudnn_attention(Tensor query, Tensor '
                                                   'key, Tensor value, Tensor? attn_bias, bool '
                                                   'compute_log_sumexp, double dropout_p=0.0, bool '
                                                   'is_causal=False, bool return_debug_mask=False, *, '
                                                   'double? scale=None)',),
           '_scaled_dot_product_efficient_attention': ('_scaled_dot_product_efficient_attention(Tensor '
                                                       'query, Tensor key, Tensor value, Tensor? attn_bias, '
                                                       'bool compute_log_sumexp, double dropout_p=0.0, bool '
                                                       'is_causal=False, *, double? scale=None)',),
           '_scaled_dot_product_flash_attention': ('_scaled_dot_product_flash_attention(Tensor query, Tensor '
                                                   'key, Tensor value, Tensor? q_descale, Tensor? k_descale, '
                                                   'Tensor? v_descale, double dropout_p=0.0, bool '
                                                   'is_causal=False, bool return_debug_mask=False, *, '
                                                   'double? scale=None)',
                                                   '_scaled_dot_product_flash_attention(Tensor query, Tensor '
                                                   'key, Tensor value, double dropout_p=0.0, bool '
                                                   'is_causal=False, bool return_debug_mask=False, *, '
                                                   'double? scale=None)'),
           '_scaled_dot_product_flash_attention_for_cpu': ('_scaled_dot_product_flash_attention_for_cpu(Tensor '
                                                           'query, Tensor key, Tensor value, double '
                                                           'dropout_p=0.0, bool is_causal=False, *, Tensor? '
                                                           'attn_mask=None, double? scale=None)',),
           '_scaled_grouped_mm': ('_scaled_grouped_mm(Tensor input, Tensor mat2, Tensor scale_a, Tensor '
                                  'scale_b, Tensor? offs=None, Tensor? bias=None, Tensor? scale_result=None, '
                                  'ScalarType? out_dtype=None, bool use_fast_accum=False)',),
           '_scaled_grouped_mm_v2': ('_scaled_grouped_mm_v2(Tensor input, Tensor mat2, TensorList scale_a, '
                                     'IntArrayRef recipe_a, IntArrayRef swizzle_a, TensorList scale_b, '
                                     'IntArrayRef recipe_b, IntArrayRef swizzle_b, Tensor? offs=None, '
                                     'Tensor? bias=None, ScalarType? out_dtype=None, IntArrayRef '
                                     'contraction_dim=None, bool use_fast_accum=False)',),
           '_scaled_mm': ('_scaled_mm(Tensor input, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? '
                          'bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool '
                          'use_fast_accum=False, *, Tensor out=None)',),
           '_scaled_mm_v2': ('_scaled_mm_v2(Tensor input, Tensor mat2, TensorList scale_a, IntArrayRef '
                             'recipe_a, IntArrayRef swizzle_a, TensorList scale_b, IntArrayRef recipe_b, '
                             'IntArrayRef swizzle_b, Tensor? bias, ScalarType? out_dtype, IntArrayRef '
                             'contraction_dim=None, bool use_fast_accum=False, *, Tensor out=None)',),
           '_shape_as_tensor': ('_shape_as_tensor(Tensor input)',),
           '_sobol_engine_draw': ('_sobol_engine_draw(Tensor quasi, int64_t n, Tensor sobolstate, int64_t '
                                  'dimension, int64_t num_generated, ScalarType? dtype)',),
           '_sobol_engine_ff_': ('_sobol_engine_ff_(Tensor input, int64_t n, Tensor sobolstate, int64_t '
                                 'dimension, int64_t num_generated)',),
           '_sobol_engine_initialize_state_': ('_sobol_engine_initialize_state_(Tensor input, int64_t '
                                               'dimension)',),
           '_sobol_engine_scramble_': ('_sobol_engine_scramble_(Tensor input, Tensor ltm, int64_t '
                                       'dimension)',),
           '_softmax': ('_softmax(Tensor input, int64_t dim, bool half_to_float, *, Tensor out=None)',),
           '_softmax_backward_data': ('_softmax_backward_data(Tensor grad_output, Tensor output, int64_t '
                                      'dim, ScalarType input_dtype, *, Tensor grad_input=None)',),
           '_sparse_broadcast_to': ('_sparse_broadcast_to(Tensor input, IntArrayRef size)',),
           '_sparse_broadcast_to_copy': ('_sparse_broadcast_to_copy(Tensor input, IntArrayRef size, *, '
                                         'Tensor out=None)',),
           '_sparse_csr_prod': ('_sparse_csr_prod(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, '
                                'ScalarType? dtype=None)',),
           '_sparse_csr_sum': ('_sparse_csr_sum(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, '
                               'ScalarType? dtype=None)',),
           '_sparse_log_softmax_backward_data': ('_sparse_log_softmax_backward_data(Tensor grad_output, '
                                                 'Tensor output, int64_t dim, Tensor input)',),
           '_sparse_semi_structured_addmm': ('_sparse_semi_structured_addmm(Tensor input, Tensor mat1, '
                                             'Tensor mat1_meta, Tensor mat2, *, Scalar alpha=1, Scalar '
                                             'beta=1, ScalarType? out_dtype=None)',),
           '_sparse_semi_structured_apply': ('_sparse_semi_structured_apply(Tensor input, Tensor '
                                             'thread_masks)',),
           '_sparse_semi_structured_apply_dense': ('_sparse_semi_structured_apply_dense(Tensor input, Tensor '
                                                   'thread_masks)',),
           '_sparse_semi_structured_linear': ('_sparse_semi_structured_linear(Tensor input, Tensor weight, '
                                              'Tensor meta, *, Tensor? bias=None, c10::string_view? '
                                              'activation=None, ScalarType? out_dtype=None)',),
           '_sparse_semi_structured_mm': ('_sparse_semi_structured_mm(Tensor mat1, Tensor mat1_meta, Tensor '
                                          'mat2, *, ScalarType? out_dtype=None)',),
           '_sparse_semi_structured_tile': ('_sparse_semi_structured_tile(Tensor input, c10::string_view '
                                            'algorithm="", bool use_cutlass=True)',),
           '_sparse_softmax_backward_data': ('_sparse_softmax_backward_data(Tensor grad_output, Tensor '
                                             'output, int64_t dim, Tensor input)',),
           '_sparse_sparse_matmul': ('_sparse_sparse_matmul(Tensor input, Tensor other)',),
           '_sparse_sum': ('_sparse_sum(Tensor input)',
                           '_sparse_sum(Tensor input, *, ScalarType dtype)',
                           '_sparse_sum(Tensor input, IntArrayRef[1] dim)',
                           '_sparse_sum(Tensor input, IntArrayRef[1] dim, *, ScalarType dtype)'),
           '_stack': ('_stack(TensorList tensors, int64_t dim=0, *, Tensor out=None)',),
           '_standard_gamma': ('_standard_gamma(Tensor input, Generator? generator=None)',),
           '_standard_gamma_grad': ('_standard_gamma_grad(Tensor input, Tensor output)',),
           '_test_autograd_multiple_dispatch': ('_test_autograd_multiple_dispatch(Tensor input)',
                                                '_test_autograd_multiple_dispatch(Tensor input, bool b)'),
           '_test_autograd_multiple_dispatch_view': ('_test_autograd_multiple_dispatch_view(Tensor input)',),
           '_test_autograd_multiple_dispatch_view_copy': ('_test_autograd_multiple_dispatch_view_copy(Tensor '
                                                          'input, *, Tensor out=None)',),
           '_test_check_tensor': ('_test_check_tensor(Tensor input)',),
           '_test_functorch_fallback': ('_test_functorch_fallback(Tensor input, Tensor other)',),
           '_test_parallel_materialize': ('_test_parallel_materialize(Tensor input, int64_t num_parallel, '
                                          'bool skip_first=False)',),
           '_test_serialization_subcmul': ('_test_serialization_subcmul(Tensor input, Tensor other, Scalar '
                                           'alpha=1)',),
           '_to_cpu': ('_to_cpu(TensorList tensors)',),
           '_to_sparse_semi_structured': ('_to_sparse_semi_structured(Tensor dense)',),
           '_transform_bias_rescale_qkv': ('_transform_bias_rescale_qkv(Tensor qkv, Tensor qkv_bias, int64_t '
                                           'num_heads)',),
           '_transformer_encoder_layer_fwd': ('_transformer_encoder_layer_fwd(Tensor src, int64_t embed_dim, '
                                              'int64_t num_heads, Tensor qkv_weight, Tensor qkv_bias, Tensor '
                                              'proj_weight, Tensor proj_bias, bool use_gelu, bool '
                                              'norm_first, double eps, Tensor norm_weight_1, Tensor '
                                              'norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor '
                                              'ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor '
                                              'ffn_bias_2, Tensor? mask=None, int64_t? mask_type=None)',),
           '_trilinear': ('_trilinear(Tensor i1, Tensor i2, Tensor i3, IntArrayRef expand1, IntArrayRef '
                          'expand2, IntArrayRef expand3, IntArrayRef sumdim, int64_t unroll_dim=1)',),
           '_triton_multi_head_attention': ('_triton_multi_head_attention(Tensor query, Tensor key, Tensor '
                                            'value, int64_t embed_dim, int64_t num_head, Tensor qkv_weight, '
                                            'Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? '
                                            'mask=None)',),
           '_triton_scaled_dot_attention': ('_triton_scaled_dot_attention(Tensor q, Tensor k, Tensor v, '
                                            'double dropout_p=0.0)',),
           '_unique': ('_unique(Tensor input, bool sorted=True, bool return_inverse=False)',),
           '_unique2': ('_unique2(Tensor input, bool sorted=True, bool return_inverse=False, bool '
                        'return_counts=False)',),
           '_unpack_dual': ('_unpack_dual(Tensor dual, int64_t level)',),
           '_unsafe_index': ('_unsafe_index(Tensor input, c10::List<::std::optional<Tensor>> indices)',),
           '_unsafe_index_put': ('_unsafe_index_put(Tensor input, c10::List<::std::optional<Tensor>> '
                                 'indices, Tensor values, bool accumulate=False)',),
           '_unsafe_masked_index': ('_unsafe_masked_index(Tensor input, Tensor mask, '
                                    'c10::List<::std::optional<Tensor>> indices, Scalar fill)',),
           '_unsafe_masked_index_put_accumulate': ('_unsafe_masked_index_put_accumulate(Tensor input, Tensor '
                                                   'mask, c10::List<::std::optional<Tensor>> indices, Tensor '
                                                   'values)',),
           '_use_cudnn_ctc_loss': ('_use_cudnn_ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef '
                                   'input_lengths, IntArrayRef target_lengths, int64_t blank)',
                                   '_use_cudnn_ctc_loss(Tensor log_probs, Tensor targets, Tensor '
                                   'input_lengths, Tensor target_lengths, int64_t blank)'),
           '_use_miopen_ctc_loss': ('_use_miopen_ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef '
                                    'input_lengths, IntArrayRef target_lengths, int64_t blank)',
                                    '_use_miopen_ctc_loss(Tensor log_probs, Tensor targets, Tensor '
                                    'input_lengths, Tensor target_lengths, int64_t blank)'),
           '_validate_compressed_sparse_indices': ('_validate_compressed_sparse_indices(bool is_crow, Tensor '
                                                   'compressed_idx, Tensor plain_idx, int64_t cdim, int64_t '
                                                   'dim, int64_t nnz)',),
           '_validate_sparse_bsc_tensor_args': ('_validate_sparse_bsc_tensor_args(Tensor ccol_indices, '
                                                'Tensor row_indices, Tensor values, IntArrayRef size, bool? '
                                                'check_pinning=None)',),
           '_validate_sparse_bsr_tensor_args': ('_validate_sparse_bsr_tensor_args(Tensor crow_indices, '
                                                'Tensor col_indices, Tensor values, IntArrayRef size, bool? '
                                                'check_pinning=None)',),
           '_validate_sparse_compressed_tensor_args': ('_validate_sparse_compressed_tensor_args(Tensor '
                                                       'compressed_indices, Tensor plain_indices, Tensor '
                                                       'values, IntArrayRef size, Layout layout, bool? '
                                                       'check_pinning=None)',),
           '_validate_sparse_coo_tensor_args': ('_validate_sparse_coo_tensor_args(Tensor indices, Tensor '
                                                'values, IntArrayRef size, bool? is_coalesced=None, bool? '
                                                'check_pinning=None)',),
           '_validate_sparse_csc_tensor_args': ('_validate_sparse_csc_tensor_args(Tensor ccol_indices, '
                                                'Tensor row_indices, Tensor values, IntArrayRef size, bool? '
                                                'check_pinning=None)',),
           '_validate_sparse_csr_tensor_args': ('_validate_sparse_csr_tensor_args(Tensor crow_indices, '
                                                'Tensor col_indices, Tensor values, IntArrayRef size, bool? '
                                                'check_pinning=None)',),
           '_values_copy': ('_values_copy(Tensor input, *, Tensor out=None)',),
           '_weight_int4pack_mm': ('_weight_int4pack_mm(Tensor input, Tensor mat2, int64_t qGroupSize, '
                                   'Tensor qScaleAndZeros)',),
           '_weight_int4pack_mm_for_cpu': ('_weight_int4pack_mm_for_cpu(Tensor input, Tensor mat2, int64_t '
                                           'qGroupSize, Tensor qScaleAndZeros)',),
           '_weight_int4pack_mm_with_scales_and_zeros': ('_weight_int4pack_mm_with_scales_and_zeros(Tensor '
                                                         'input, Tensor mat2, int64_t qGroupSize, Tensor '
                                                         'qScale, Tensor qZeros)',),
           '_weight_int8pack_mm': ('_weight_int8pack_mm(Tensor input, Tensor mat2, Tensor scales)',),
           '_weight_norm': ('_weight_norm(Tensor v, Tensor g, int64_t dim=0)',),
           '_weight_norm_interface': ('_weight_norm_interface(Tensor v, Tensor g, int64_t dim=0)',),
           '_wrapped_linear_prepack': ('_wrapped_linear_prepack(Tensor weight, Tensor weight_scale, Tensor '
                                       'weight_zero_point, Tensor bias)',),
           '_wrapped_quantized_linear_prepacked': ('_wrapped_quantized_linear_prepacked(Tensor input, Tensor '
                                                   'input_scale, Tensor input_zero_point, Tensor '
                                                   'packed_weight, Tensor output_scale, Tensor '
                                                   'output_zero_point, int64_t out_channel)',),
           'abs': ('abs(Tensor input, *, Tensor out=None)',),
           'abs_': ('abs_(Tensor input)',),
           'absolute': ('absolute(Tensor input, *, Tensor out=None)',),
           'acos': ('acos(Tensor input, *, Tensor out=None)',),
           'acos_': ('acos_(Tensor input)',),
           'acosh': ('acosh(Tensor input, *, Tensor out=None)',),
           'acosh_': ('acosh_(Tensor input)',),
           'adaptive_avg_pool1d': ('adaptive_avg_pool1d(Tensor input, IntArrayRef[1] output_size)',),
           'adaptive_max_pool1d': ('adaptive_max_pool1d(Tensor input, IntArrayRef[1] output_size)',),
           'add': ('add(Tensor input, Scalar alpha, Tensor other, *, Tensor out=None)|deprecated',
                   'add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)'),
           'addbmm': ('addbmm(Scalar beta, Tensor input, Scalar alpha, Tensor batch1, Tensor batch2, *, '
                      'Tensor out=None)|deprecated',
                      'addbmm(Scalar beta, Tensor input, Tensor batch1, Tensor batch2, *, Tensor '
                      'out=None)|deprecated',
                      'addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, '
                      'Tensor out=None)'),
           'addcdiv': ('addcdiv(Tensor input, Scalar value, Tensor tensor1, Tensor tensor2, *, Tensor '
                       'out=None)|deprecated',
                       'addcdiv(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor '
                       'out=None)'),
           'addcmul': ('addcmul(Tensor input, Scalar value, Tensor tensor1, Tensor tensor2, *, Tensor '
                       'out=None)|deprecated',
                       'addcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor '
                       'out=None)'),
           'addmm': ('addmm(Scalar beta, Tensor input, Scalar alpha, Tensor mat1, Tensor mat2, *, Tensor '
                     'out=None)|deprecated',
                     'addmm(Scalar beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor '
                     'out=None)|deprecated',
                     'addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor '
                     'out=None)',
                     'addmm(Tensor input, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, '
                     'Scalar alpha=1, Tensor out=None)'),
           'addmv': ('addmv(Scalar beta, Tensor input, Scalar alpha, Tensor mat, Tensor vec, *, Tensor '
                     'out=None)|deprecated',
                     'addmv(Scalar beta, Tensor input, Tensor mat, Tensor vec, *, Tensor '
                     'out=None)|deprecated',
                     'addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor '
                     'out=None)'),
           'addmv_': ('addmv_(Scalar beta, Tensor input, Scalar alpha, Tensor mat, Tensor vec)|deprecated',
                      'addmv_(Scalar beta, Tensor input, Tensor mat, Tensor vec)|deprecated',
                      'addmv_(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)'),
           'addr': ('addr(Scalar beta, Tensor input, Scalar alpha, Tensor vec1, Tensor vec2, *, Tensor '
                    'out=None)|deprecated',
                    'addr(Scalar beta, Tensor input, Tensor vec1, Tensor vec2, *, Tensor '
                    'out=None)|deprecated',
                    'addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor '
                    'out=None)'),
           'adjoint': ('adjoint(Tensor input)',),
           'affine_grid_generator': ('affine_grid_generator(Tensor theta, SymIntArrayRef size, bool '
                                     'align_corners)',),
           'alias_copy': ('alias_copy(Tensor input, *, Tensor out=None)',),
           'all': ('all(Tensor input, *, Tensor out=None)',
                   'all(Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None)',
                   'all(Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None)'),
           'allclose': ('allclose(Tensor input, Tensor other, double rtol=1e-05, double atol=1e-08, bool '
                        'equal_nan=False)',),
           'alpha_dropout': ('alpha_dropout(Tensor input, double p, bool train)',),
           'alpha_dropout_': ('alpha_dropout_(Tensor input, double p, bool train)',),
           'amax': ('amax(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)',),
           'amin': ('amin(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)',),
           'aminmax': ('aminmax(Tensor input, *, int64_t? dim=None, bool keepdim=False, TensorList[2] '
                       'out=None)',),
           'angle': ('angle(Tensor input, *, Tensor out=None)',),
           'any': ('any(Tensor input, *, Tensor out=None)',
                   'any(Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None)',
                   'any(Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None)'),
           'arange': ('arange(Scalar end, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, '
                      'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',
                      'arange(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, '
                      'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',
                      'arange(Scalar start, Scalar end, Scalar step=1, *, Tensor out=None, ScalarType? '
                      'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                      'requires_grad=False)'),
           'arccos': ('arccos(Tensor input, *, Tensor out=None)',),
           'arccos_': ('arccos_(Tensor input)',),
           'arccosh': ('arccosh(Tensor input, *, Tensor out=None)',),
           'arccosh_': ('arccosh_(Tensor input)',),
           'arcsin': ('arcsin(Tensor input, *, Tensor out=None)',),
           'arcsin_': ('arcsin_(Tensor input)',),
           'arcsinh': ('arcsinh(Tensor input, *, Tensor out=None)',),
           'arcsinh_': ('arcsinh_(Tensor input)',),
           'arctan': ('arctan(Tensor input, *, Tensor out=None)',),
           'arctan2': ('arctan2(Tensor input, Tensor other, *, Tensor out=None)',),
           'arctan_': ('arctan_(Tensor input)',),
           'arctanh': ('arctanh(Tensor input, *, Tensor out=None)',),
           'arctanh_': ('arctanh_(Tensor input)',),
           'argmax': ('argmax(Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None)',),
           'argmin': ('argmin(Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None)',),
           'argsort': ('argsort(Tensor input, *, bool stable, int64_t dim=-1, bool descending=False, Tensor '
                       'out=None)',
                       'argsort(Tensor input, int64_t dim=-1, bool descending=False)'),
           'argwhere': ('argwhere(Tensor input)',),
           'as_strided': ('as_strided(Tensor input, SymIntArrayRef size, SymIntArrayRef stride, SymInt? '
                          'storage_offset=None)',),
           'as_strided_': ('as_strided_(Tensor input, SymIntArrayRef size, SymIntArrayRef stride, SymInt? '
                           'storage_offset=None)',),
           'as_strided_copy': ('as_strided_copy(Tensor input, SymIntArrayRef size, SymIntArrayRef stride, '
                               'SymInt? storage_offset=None, *, Tensor out=None)',),
           'as_strided_scatter': ('as_strided_scatter(Tensor input, Tensor src, SymIntArrayRef size, '
                                  'SymIntArrayRef stride, SymInt? storage_offset=None)',),
           'asin': ('asin(Tensor input, *, Tensor out=None)',),
           'asin_': ('asin_(Tensor input)',),
           'asinh': ('asinh(Tensor input, *, Tensor out=None)',),
           'asinh_': ('asinh_(Tensor input)',),
           'atan': ('atan(Tensor input, *, Tensor out=None)',),
           'atan2': ('atan2(Tensor input, Tensor other, *, Tensor out=None)',),
           'atan_': ('atan_(Tensor input)',),
           'atanh': ('atanh(Tensor input, *, Tensor out=None)',),
           'atanh_': ('atanh_(Tensor input)',),
           'avg_pool1d': ('avg_pool1d(Tensor input, IntArrayRef[1] kernel_size, IntArrayRef[1] stride=None, '
                          'IntArrayRef[1] padding=0, bool ceil_mode=False, bool count_include_pad=True)',),
           'baddbmm': ('baddbmm(Scalar beta, Tensor input, Scalar alpha, Tensor batch1, Tensor batch2, *, '
                       'Tensor out=None)|deprecated',
                       'baddbmm(Scalar beta, Tensor input, Tensor batch1, Tensor batch2, *, Tensor '
                       'out=None)|deprecated',
                       'baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar '
                       'alpha=1, Tensor out=None)',
                       'baddbmm(Tensor input, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar '
                       'beta=1, Scalar alpha=1, Tensor out=None)'),
           'bartlett_window': ('bartlett_window(int64_t window_length, *, ScalarType? dtype=None, Layout? '
                               'layout=None, Device? device=None, bool? pin_memory=False, bool? '
                               'requires_grad=False)',
                               'bartlett_window(int64_t window_length, bool periodic, *, ScalarType? '
                               'dtype=None, Layout? layout=None, Device? device=None, bool? '
                               'pin_memory=False, bool? requires_grad=False)'),
           'batch_norm': ('batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, '
                          'Tensor? running_var, bool training, double momentum, double eps, bool '
                          'cudnn_enabled)',),
           'batch_norm_backward_elemt': ('batch_norm_backward_elemt(Tensor grad_out, Tensor input, Tensor '
                                         'mean, Tensor invstd, Tensor? weight, Tensor sum_dy, Tensor '
                                         'sum_dy_xmu, Tensor count)',),
           'batch_norm_backward_reduce': ('batch_norm_backward_reduce(Tensor grad_out, Tensor input, Tensor '
                                          'mean, Tensor invstd, Tensor? weight, bool input_g, bool weight_g, '
                                          'bool bias_g)',),
           'batch_norm_elemt': ('batch_norm_elemt(Tensor input, Tensor? weight, Tensor? bias, Tensor mean, '
                                'Tensor invstd, double eps, *, Tensor out=None)',),
           'batch_norm_gather_stats': ('batch_norm_gather_stats(Tensor input, Tensor mean, Tensor invstd, '
                                       'Tensor? running_mean, Tensor? running_var, double momentum, double '
                                       'eps, int64_t count)',),
           'batch_norm_gather_stats_with_counts': ('batch_norm_gather_stats_with_counts(Tensor input, Tensor '
                                                   'mean, Tensor invstd, Tensor? running_mean, Tensor? '
                                                   'running_var, double momentum, double eps, Tensor '
                                                   'counts)',),
           'batch_norm_stats': ('batch_norm_stats(Tensor input, double eps)',),
           'batch_norm_update_stats': ('batch_norm_update_stats(Tensor input, Tensor? running_mean, Tensor? '
                                       'running_var, double momentum)',),
           'bernoulli': ('bernoulli(Tensor input, *, Generator? generator=None, Tensor out=None)',
                         'bernoulli(Tensor input, double p, *, Generator? generator=None)'),
           'bilinear': ('bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)',),
           'binary_cross_entropy_with_logits': ('binary_cross_entropy_with_logits(Tensor input, Tensor '
                                                'target, Tensor? weight=None, Tensor? pos_weight=None, '
                                                'int64_t reduction=at::Reduction::Mean)',),
           'bincount': ('bincount(Tensor input, Tensor? weights=None, SymInt minlength=0)',),
           'binomial': ('binomial(Tensor count, Tensor prob, Generator? generator=None)',),
           'bitwise_and': ('bitwise_and(Tensor input, Tensor other, *, Tensor out=None)',
                           'bitwise_and(Scalar self, Tensor other)',
                           'bitwise_and(Tensor input, Scalar other, *, Tensor out=None)'),
           'bitwise_left_shift': ('bitwise_left_shift(Tensor input, Tensor other, *, Tensor out=None)',
                                  'bitwise_left_shift(Scalar self, Tensor other)',
                                  'bitwise_left_shift(Tensor input, Scalar other, *, Tensor out=None)'),
           'bitwise_not': ('bitwise_not(Tensor input, *, Tensor out=None)',),
           'bitwise_or': ('bitwise_or(Tensor input, Tensor other, *, Tensor out=None)',
                          'bitwise_or(Scalar self, Tensor other)',
                          'bitwise_or(Tensor input, Scalar other, *, Tensor out=None)'),
           'bitwise_right_shift': ('bitwise_right_shift(Tensor input, Tensor other, *, Tensor out=None)',
                                   'bitwise_right_shift(Scalar self, Tensor other)',
                                   'bitwise_right_shift(Tensor input, Scalar other, *, Tensor out=None)'),
           'bitwise_xor': ('bitwise_xor(Tensor input, Tensor other, *, Tensor out=None)',
                           'bitwise_xor(Scalar self, Tensor other)',
                           'bitwise_xor(Tensor input, Scalar other, *, Tensor out=None)'),
           'blackman_window': ('blackman_window(int64_t window_length, *, ScalarType? dtype=None, Layout? '
                               'layout=None, Device? device=None, bool? pin_memory=False, bool? '
                               'requires_grad=False)',
                               'blackman_window(int64_t window_length, bool periodic, *, ScalarType? '
                               'dtype=None, Layout? layout=None, Device? device=None, bool? '
                               'pin_memory=False, bool? requires_grad=False)'),
           'bmm': ('bmm(Tensor input, Tensor mat2, *, Tensor out=None)',
                   'bmm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)'),
           'broadcast_to': ('broadcast_to(Tensor input, SymIntArrayRef size)',),
           'bucketize': ('bucketize(Tensor input, Tensor boundaries, *, bool out_int32=False, bool '
                         'right=False, Tensor out=None)',
                         'bucketize(Scalar self, Tensor boundaries, *, bool out_int32=False, bool '
                         'right=False)'),
           'can_cast': ('can_cast(ScalarType from_, ScalarType to)',),
           'cat': ('cat(TensorList tensors, int64_t dim=0, *, Tensor out=None)',),
           'ccol_indices_copy': ('ccol_indices_copy(Tensor input, *, Tensor out=None)',),
           'ceil': ('ceil(Tensor input, *, Tensor out=None)',),
           'ceil_': ('ceil_(Tensor input)',),
           'celu': ('celu(Tensor input, Scalar alpha=1.0)',),
           'celu_': ('celu_(Tensor input, Scalar alpha=1.0)',),
           'channel_shuffle': ('channel_shuffle(Tensor input, SymInt groups)',),
           'cholesky': ('cholesky(Tensor input, bool upper=False, *, Tensor out=None)',),
           'cholesky_inverse': ('cholesky_inverse(Tensor input, bool upper=False, *, Tensor out=None)',),
           'cholesky_solve': ('cholesky_solve(Tensor input, Tensor input2, bool upper=False, *, Tensor '
                              'out=None)',),
           'choose_qparams_optimized': ('choose_qparams_optimized(Tensor input, int64_t numel, int64_t '
                                        'n_bins, double ratio, int64_t bit_width)',),
           'chunk': ('chunk(Tensor input, int64_t chunks, int64_t dim=0)',),
           'clamp': ('clamp(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None)',
                     'clamp(Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor out=None)'),
           'clamp_': ('clamp_(Tensor input, Tensor? min=None, Tensor? max=None)',
                      'clamp_(Tensor input, Scalar? min=None, Scalar? max=None)'),
           'clamp_max': ('clamp_max(Tensor input, Tensor max, *, Tensor out=None)',
                         'clamp_max(Tensor input, Scalar max, *, Tensor out=None)'),
           'clamp_max_': ('clamp_max_(Tensor input, Tensor max)', 'clamp_max_(Tensor input, Scalar max)'),
           'clamp_min': ('clamp_min(Tensor input, Tensor min, *, Tensor out=None)',
                         'clamp_min(Tensor input, Scalar min, *, Tensor out=None)'),
           'clamp_min_': ('clamp_min_(Tensor input, Tensor min)', 'clamp_min_(Tensor input, Scalar min)'),
           'clip': ('clip(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None)',
                    'clip(Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor out=None)'),
           'clip_': ('clip_(Tensor input, Tensor? min=None, Tensor? max=None)',
                     'clip_(Tensor input, Scalar? min=None, Scalar? max=None)'),
           'clone': ('clone(Tensor input, *, MemoryFormat? memory_format=None)',),
           'col_indices_copy': ('col_indices_copy(Tensor input, *, Tensor out=None)',),
           'column_stack': ('column_stack(TensorList tensors, *, Tensor out=None)',),
           'combinations': ('combinations(Tensor input, int64_t r=2, bool with_replacement=False)',),
           'complex': ('complex(Tensor real, Tensor imag, *, Tensor out=None)',),
           'concat': ('concat(TensorList tensors, int64_t dim=0, *, Tensor out=None)',),
           'concatenate': ('concatenate(TensorList tensors, int64_t dim=0, *, Tensor out=None)',),
           'conj': ('conj(Tensor input)',),
           'conj_physical': ('conj_physical(Tensor input, *, Tensor out=None)',),
           'conj_physical_': ('conj_physical_(Tensor input)',),
           'constant_pad_nd': ('constant_pad_nd(Tensor input, SymIntArrayRef pad, Scalar value=0)',),
           'conv1d': ('conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[1] stride=1, '
                      'SymIntArrayRef[1] padding=0, SymIntArrayRef[1] dilation=1, SymInt groups=1)',
                      'conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[1] stride=1, '
                      'c10::string_view padding="valid", SymIntArrayRef[1] dilation=1, SymInt groups=1)'),
           'conv2d': ('conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[2] stride=1, '
                      'SymIntArrayRef[2] padding=0, SymIntArrayRef[2] dilation=1, SymInt groups=1)',
                      'conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[2] stride=1, '
                      'c10::string_view padding="valid", SymIntArrayRef[2] dilation=1, SymInt groups=1)'),
           'conv3d': ('conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[3] stride=1, '
                      'SymIntArrayRef[3] padding=0, SymIntArrayRef[3] dilation=1, SymInt groups=1)',
                      'conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[3] stride=1, '
                      'c10::string_view padding="valid", SymIntArrayRef[3] dilation=1, SymInt groups=1)'),
           'conv_tbc': ('conv_tbc(Tensor input, Tensor weight, Tensor bias, int64_t pad=0)',),
           'conv_transpose1d': ('conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, '
                                'SymIntArrayRef[1] stride=1, SymIntArrayRef[1] padding=0, SymIntArrayRef[1] '
                                'output_padding=0, SymInt groups=1, SymIntArrayRef[1] dilation=1)',),
           'conv_transpose2d': ('conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, '
                                'SymIntArrayRef[2] stride=1, SymIntArrayRef[2] padding=0, SymIntArrayRef[2] '
                                'output_padding=0, SymInt groups=1, SymIntArrayRef[2] dilation=1)',),
           'conv_transpose3d': ('conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, '
                                'SymIntArrayRef[3] stride=1, SymIntArrayRef[3] padding=0, SymIntArrayRef[3] '
                                'output_padding=0, SymInt groups=1, SymIntArrayRef[3] dilation=1)',),
           'convolution': ('convolution(Tensor input, Tensor weight, Tensor? bias, SymIntArrayRef stride, '
                           'SymIntArrayRef padding, SymIntArrayRef dilation, bool transposed, SymIntArrayRef '
                           'output_padding, SymInt groups)',),
           'copysign': ('copysign(Tensor input, Tensor other, *, Tensor out=None)',
                        'copysign(Tensor input, Scalar other, *, Tensor out=None)'),
           'corrcoef': ('corrcoef(Tensor input)',),
           'cos': ('cos(Tensor input, *, Tensor out=None)',),
           'cos_': ('cos_(Tensor input)',),
           'cosh': ('cosh(Tensor input, *, Tensor out=None)',),
           'cosh_': ('cosh_(Tensor input)',),
           'cosine_embedding_loss': ('cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, '
                                     'double margin=0.0, int64_t reduction=at::Reduction::Mean)',),
           'cosine_similarity': ('cosine_similarity(Tensor x1, Tensor x2, int64_t dim=1, double eps=1e-08)',),
           'count_nonzero': ('count_nonzero(Tensor input, int64_t? dim=None)',
                             'count_nonzero(Tensor input, IntArrayRef dim)'),
           'cov': ('cov(Tensor input, *, int64_t correction=1, Tensor? fweights=None, Tensor? '
                   'aweights=None)',),
           'cross': ('cross(Tensor input, Tensor other, int64_t? dim=None, *, Tensor out=None)',),
           'crow_indices_copy': ('crow_indices_copy(Tensor input, *, Tensor out=None)',),
           'ctc_loss': ('ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef input_lengths, IntArrayRef '
                        'target_lengths, int64_t blank=0, int64_t reduction=at::Reduction::Mean, bool '
                        'zero_infinity=False)',
                        'ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor '
                        'target_lengths, int64_t blank=0, int64_t reduction=at::Reduction::Mean, bool '
                        'zero_infinity=False)'),
           'cudnn_affine_grid_generator': ('cudnn_affine_grid_generator(Tensor theta, int64_t N, int64_t C, '
                                           'int64_t H, int64_t W)',),
           'cudnn_batch_norm': ('cudnn_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? '
                                'running_mean, Tensor? running_var, bool training, double '
                                'exponential_average_factor, double epsilon, *, TensorList[4] out=None)',),
           'cudnn_convolution': ('cudnn_convolution(Tensor input, Tensor weight, SymIntArrayRef padding, '
                                 'SymIntArrayRef stride, SymIntArrayRef dilation, SymInt groups, bool '
                                 'benchmark, bool deterministic, bool allow_tf32, *, Tensor out=None)',),
           'cudnn_convolution_add_relu': ('cudnn_convolution_add_relu(Tensor input, Tensor weight, Tensor z, '
                                          'Scalar? alpha, Tensor? bias, SymIntArrayRef stride, '
                                          'SymIntArrayRef padding, SymIntArrayRef dilation, SymInt groups)',),
           'cudnn_convolution_relu': ('cudnn_convolution_relu(Tensor input, Tensor weight, Tensor? bias, '
                                      'SymIntArrayRef stride, SymIntArrayRef padding, SymIntArrayRef '
                                      'dilation, SymInt groups)',),
           'cudnn_convolution_transpose': ('cudnn_convolution_transpose(Tensor input, Tensor weight, '
                                           'SymIntArrayRef padding, SymIntArrayRef output_padding, '
                                           'SymIntArrayRef stride, SymIntArrayRef dilation, SymInt groups, '
                                           'bool benchmark, bool deterministic, bool allow_tf32)',),
           'cudnn_grid_sampler': ('cudnn_grid_sampler(Tensor input, Tensor grid)',),
           'cudnn_is_acceptable': ('cudnn_is_acceptable(Tensor input)',),
           'cummax': ('cummax(Tensor input, int64_t dim, *, TensorList[2] out=None)',),
           'cummin': ('cummin(Tensor input, int64_t dim, *, TensorList[2] out=None)',),
           'cumprod': ('cumprod(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)',),
           'cumsum': ('cumsum(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)',),
           'cumulative_trapezoid': ('cumulative_trapezoid(Tensor y, Tensor x, *, int64_t dim=-1)',
                                    'cumulative_trapezoid(Tensor y, *, Scalar dx=1, int64_t dim=-1)'),
           'deg2rad': ('deg2rad(Tensor input, *, Tensor out=None)',),
           'deg2rad_': ('deg2rad_(Tensor input)',),
           'dequantize': ('dequantize(Tensor input)', 'dequantize(TensorList tensors)'),
           'det': ('det(Tensor input)',),
           'detach': ('detach(Tensor input)',),
           'detach_': ('detach_(Tensor input)',),
           'detach_copy': ('detach_copy(Tensor input, *, Tensor out=None)',),
           'diag': ('diag(Tensor input, int64_t diagonal=0, *, Tensor out=None)',),
           'diag_embed': ('diag_embed(Tensor input, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1)',),
           'diagflat': ('diagflat(Tensor input, int64_t offset=0)',),
           'diagonal': ('diagonal(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1)',),
           'diagonal_copy': ('diagonal_copy(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1, '
                             '*, Tensor out=None)',),
           'diagonal_scatter': ('diagonal_scatter(Tensor input, Tensor src, int64_t offset=0, int64_t '
                                'dim1=0, int64_t dim2=1)',),
           'diff': ('diff(Tensor input, int64_t n=1, int64_t dim=-1, Tensor? prepend=None, Tensor? '
                    'append=None, *, Tensor out=None)',),
           'digamma': ('digamma(Tensor input, *, Tensor out=None)',),
           'dist': ('dist(Tensor input, Tensor other, Scalar p=2)',),
           'div': ('div(Tensor input, Tensor other, *, Tensor out=None)',
                   'div(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor out=None)',
                   'div(Tensor input, Scalar other, *, c10::string_view? rounding_mode)'),
           'divide': ('divide(Tensor input, Tensor other, *, Tensor out=None)',
                      'divide(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor '
                      'out=None)',
                      'divide(Tensor input, Scalar other)',
                      'divide(Tensor input, Scalar other, *, c10::string_view? rounding_mode)'),
           'dot': ('dot(Tensor input, Tensor tensor, *, Tensor out=None)',),
           'dropout': ('dropout(Tensor input, double p, bool train)',),
           'dropout_': ('dropout_(Tensor input, double p, bool train)',),
           'dsplit': ('dsplit(Tensor input, int64_t sections)', 'dsplit(Tensor input, IntArrayRef indices)'),
           'dstack': ('dstack(TensorList tensors, *, Tensor out=None)',),
           'embedding': ('embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool '
                         'scale_grad_by_freq=False, bool sparse=False)',),
           'embedding_bag': ('embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool '
                             'scale_grad_by_freq, int64_t mode, bool sparse, Tensor? per_sample_weights, '
                             'bool include_last_offset, int64_t? padding_idx)',
                             'embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool '
                             'scale_grad_by_freq=False, int64_t mode=0, bool sparse=False, Tensor? '
                             'per_sample_weights=None, bool include_last_offset=False)'),
           'embedding_renorm_': ('embedding_renorm_(Tensor input, Tensor indices, double max_norm, double '
                                 'norm_type)',),
           'empty': ('empty(SymIntArrayRef size, *, MemoryFormat? memory_format=None, Tensor out=None, '
                     'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                     'pin_memory=False, bool? requires_grad=False)',),
           'empty_like': ('empty_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? '
                          'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                          'bool? requires_grad=False)',),
           'empty_permuted': ('empty_permuted(SymIntArrayRef size, IntArrayRef physical_layout, *, '
                              'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                              'pin_memory=False, bool? requires_grad=False)',),
           'empty_quantized': ('empty_quantized(IntArrayRef size, Tensor qtensor, *, MemoryFormat? '
                               'memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                               'device=None, bool? pin_memory=False, bool? requires_grad=False)',),
           'empty_strided': ('empty_strided(SymIntArrayRef size, SymIntArrayRef stride, *, ScalarType? '
                             'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                             'bool? requires_grad=False)',),
           'eq': ('eq(Tensor input, Tensor other, *, Tensor out=None)',
                  'eq(Tensor input, Scalar other, *, Tensor out=None)'),
           'equal': ('equal(Tensor input, Tensor other)',),
           'erf': ('erf(Tensor input, *, Tensor out=None)',),
           'erf_': ('erf_(Tensor input)',),
           'erfc': ('erfc(Tensor input, *, Tensor out=None)',),
           'erfc_': ('erfc_(Tensor input)',),
           'erfinv': ('erfinv(Tensor input, *, Tensor out=None)',),
           'exp': ('exp(Tensor input, *, Tensor out=None)',),
           'exp2': ('exp2(Tensor input, *, Tensor out=None)',),
           'exp2_': ('exp2_(Tensor input)',),
           'exp_': ('exp_(Tensor input)',),
           'expand_copy': ('expand_copy(Tensor input, SymIntArrayRef size, *, bool implicit=False, Tensor '
                           'out=None)',),
           'expm1': ('expm1(Tensor input, *, Tensor out=None)',),
           'expm1_': ('expm1_(Tensor input)',),
           'eye': ('eye(SymInt n, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                   'device=None, bool? pin_memory=False, bool? requires_grad=False)',
                   'eye(SymInt n, SymInt m, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, '
                   'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)'),
           'fake_quantize_per_channel_affine': ('fake_quantize_per_channel_affine(Tensor input, Tensor '
                                                'scale, Tensor zero_point, int64_t axis, int64_t quant_min, '
                                                'int64_t quant_max)',),
           'fake_quantize_per_tensor_affine': ('fake_quantize_per_tensor_affine(Tensor input, Tensor scale, '
                                               'Tensor zero_point, int64_t quant_min, int64_t quant_max)',
                                               'fake_quantize_per_tensor_affine(Tensor input, double scale, '
                                               'int64_t zero_point, int64_t quant_min, int64_t quant_max)'),
           'fbgemm_linear_fp16_weight': ('fbgemm_linear_fp16_weight(Tensor input, Tensor packed_weight, '
                                         'Tensor bias)',
                                         'fbgemm_linear_fp16_weight(Tensor input, Tensor packed_weight, '
                                         'Tensor bias, Tensor output)'),
           'fbgemm_linear_fp16_weight_fp32_activation': ('fbgemm_linear_fp16_weight_fp32_activation(Tensor '
                                                         'input, Tensor packed_weight, Tensor? bias)',
                                                         'fbgemm_linear_fp16_weight_fp32_activation(Tensor '
                                                         'input, Tensor packed_weight, Tensor? bias, Tensor '
                                                         'output)'),
           'fbgemm_linear_int8_weight': ('fbgemm_linear_int8_weight(Tensor input, Tensor weight, Tensor '
                                         'packed, Tensor col_offsets, Scalar weight_scale, Scalar '
                                         'weight_zero_point, Tensor bias)',),
           'fbgemm_linear_int8_weight_fp32_activation': ('fbgemm_linear_int8_weight_fp32_activation(Tensor '
                                                         'input, Tensor weight, Tensor packed, Tensor '
                                                         'col_offsets, Scalar weight_scale, Scalar '
                                                         'weight_zero_point, Tensor bias)',),
           'fbgemm_linear_quantize_weight': ('fbgemm_linear_quantize_weight(Tensor input)',),
           'fbgemm_pack_gemm_matrix_fp16': ('fbgemm_pack_gemm_matrix_fp16(Tensor input)',),
           'fbgemm_pack_quantized_matrix': ('fbgemm_pack_quantized_matrix(Tensor input)',
                                            'fbgemm_pack_quantized_matrix(Tensor input, int64_t K, int64_t '
                                            'N)'),
           'feature_alpha_dropout': ('feature_alpha_dropout(Tensor input, double p, bool train)',),
           'feature_alpha_dropout_': ('feature_alpha_dropout_(Tensor input, double p, bool train)',),
           'feature_dropout': ('feature_dropout(Tensor input, double p, bool train)',),
           'feature_dropout_': ('feature_dropout_(Tensor input, double p, bool train)',),
           'fill': ('fill(Tensor input, Tensor value)', 'fill(Tensor input, Scalar value)'),
           'fill_': ('fill_(Tensor input, Tensor value)', 'fill_(Tensor input, Scalar value)'),
           'fix': ('fix(Tensor input, *, Tensor out=None)',),
           'fix_': ('fix_(Tensor input)',),
           'flatten': ('flatten(Tensor input, int64_t start_dim=0, int64_t end_dim=-1)',),
           'flip': ('flip(Tensor input, IntArrayRef dims)',),
           'fliplr': ('fliplr(Tensor input)',),
           'flipud': ('flipud(Tensor input)',),
           'float_power': ('float_power(Tensor input, Tensor exponent, *, Tensor out=None)',
                           'float_power(Scalar self, Tensor exponent, *, Tensor out=None)',
                           'float_power(Tensor input, Scalar exponent, *, Tensor out=None)'),
           'floor': ('floor(Tensor input, *, Tensor out=None)',),
           'floor_': ('floor_(Tensor input)',),
           'floor_divide': ('floor_divide(Tensor input, Tensor other, *, Tensor out=None)',
                            'floor_divide(Tensor input, Scalar other)'),
           'fmax': ('fmax(Tensor input, Tensor other, *, Tensor out=None)',),
           'fmin': ('fmin(Tensor input, Tensor other, *, Tensor out=None)',),
           'fmod': ('fmod(Tensor input, Tensor other, *, Tensor out=None)',
                    'fmod(Tensor input, Scalar other, *, Tensor out=None)'),
           'frac': ('frac(Tensor input, *, Tensor out=None)',),
           'frac_': ('frac_(Tensor input)',),
           'frexp': ('frexp(Tensor input, *, TensorList[2] out=None)',),
           'frobenius_norm': ('frobenius_norm(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, '
                              'Tensor out=None)',),
           'from_file': ('from_file(c10::string_view filename, bool? shared=None, int64_t? size=0, *, '
                         'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                         'pin_memory=False, bool? requires_grad=False)',),
           'full': ('full(SymIntArrayRef size, Scalar fill_value, *, Tensor out=None, ScalarType? '
                    'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                    'requires_grad=False)',),
           'full_like': ('full_like(Tensor input, Scalar fill_value, *, MemoryFormat? memory_format=None, '
                         'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                         'pin_memory=False, bool? requires_grad=False)',),
           'fused_moving_avg_obs_fake_quant': ('fused_moving_avg_obs_fake_quant(Tensor input, Tensor '
                                               'observer_on, Tensor fake_quant_on, Tensor running_min, '
                                               'Tensor running_max, Tensor scale, Tensor zero_point, double '
                                               'averaging_const, int64_t quant_min, int64_t quant_max, '
                                               'int64_t ch_axis, bool per_row_fake_quant=False, bool '
                                               'symmetric_quant=False)',),
           'gather': ('gather(Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, Tensor '
                      'out=None)',),
           'gcd': ('gcd(Tensor input, Tensor other, *, Tensor out=None)',),
           'gcd_': ('gcd_(Tensor input, Tensor other)',),
           'ge': ('ge(Tensor input, Tensor other, *, Tensor out=None)',
                  'ge(Tensor input, Scalar other, *, Tensor out=None)'),
           'geqrf': ('geqrf(Tensor input, *, TensorList[2] out=None)',),
           'ger': ('ger(Tensor input, Tensor vec2, *, Tensor out=None)',),
           'gradient': ('gradient(Tensor input, *, IntArrayRef dim, int64_t edge_order=1)',
                        'gradient(Tensor input, *, Scalar spacing, IntArrayRef dim, int64_t edge_order=1)',
                        'gradient(Tensor input, *, Scalar? spacing=None, int64_t? dim=None, int64_t '
                        'edge_order=1)',
                        'gradient(Tensor input, *, ScalarList spacing, int64_t? dim=None, int64_t '
                        'edge_order=1)',
                        'gradient(Tensor input, *, ScalarList spacing, IntArrayRef dim, int64_t '
                        'edge_order=1)',
                        'gradient(Tensor input, *, TensorList spacing, int64_t? dim=None, int64_t '
                        'edge_order=1)',
                        'gradient(Tensor input, *, TensorList spacing, IntArrayRef dim, int64_t '
                        'edge_order=1)'),
           'greater': ('greater(Tensor input, Tensor other, *, Tensor out=None)',
                       'greater(Tensor input, Scalar other, *, Tensor out=None)'),
           'greater_equal': ('greater_equal(Tensor input, Tensor other, *, Tensor out=None)',
                             'greater_equal(Tensor input, Scalar other, *, Tensor out=None)'),
           'grid_sampler': ('grid_sampler(Tensor input, Tensor grid, int64_t interpolation_mode, int64_t '
                            'padding_mode, bool align_corners)',),
           'grid_sampler_2d': ('grid_sampler_2d(Tensor input, Tensor grid, int64_t interpolation_mode, '
                               'int64_t padding_mode, bool align_corners)',),
           'grid_sampler_3d': ('grid_sampler_3d(Tensor input, Tensor grid, int64_t interpolation_mode, '
                               'int64_t padding_mode, bool align_corners)',),
           'group_norm': ('group_norm(Tensor input, int64_t num_groups, Tensor? weight=None, Tensor? '
                          'bias=None, double eps=1e-05, bool cudnn_enabled=True)',),
           'gru': ('gru(Tensor data, Tensor batch_sizes, Tensor hx, TensorList params, bool has_biases, '
                   'int64_t num_layers, double dropout, bool train, bool bidirectional)',
                   'gru(Tensor input, Tensor hx, TensorList params, bool has_biases, int64_t num_layers, '
                   'double dropout, bool train, bool bidirectional, bool batch_first)'),
           'gru_cell': ('gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, '
                        'Tensor? b_hh=None)',),
           'gt': ('gt(Tensor input, Tensor other, *, Tensor out=None)',
                  'gt(Tensor input, Scalar other, *, Tensor out=None)'),
           'hamming_window': ('hamming_window(int64_t window_length, *, ScalarType? dtype=None, Layout? '
                              'layout=None, Device? device=None, bool? pin_memory=False, bool? '
                              'requires_grad=False)',
                              'hamming_window(int64_t window_length, bool periodic, *, ScalarType? '
                              'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                              'bool? requires_grad=False)',
                              'hamming_window(int64_t window_length, bool periodic, double alpha, *, '
                              'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                              'pin_memory=False, bool? requires_grad=False)',
                              'hamming_window(int64_t window_length, bool periodic, double alpha, double '
                              'beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
                              'bool? pin_memory=False, bool? requires_grad=False)'),
           'hann_window': ('hann_window(int64_t window_length, *, ScalarType? dtype=None, Layout? '
                           'layout=None, Device? device=None, bool? pin_memory=False, bool? '
                           'requires_grad=False)',
                           'hann_window(int64_t window_length, bool periodic, *, ScalarType? dtype=None, '
                           'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                           'requires_grad=False)'),
           'hardshrink': ('hardshrink(Tensor input, Scalar lambd=0.5, *, Tensor out=None)',),
           'hash_tensor': ('hash_tensor(Tensor input, IntArrayRef[1] dim=None, *, bool keepdim=False, '
                           'int64_t mode=0, Tensor out=None)',),
           'heaviside': ('heaviside(Tensor input, Tensor values, *, Tensor out=None)',),
           'hinge_embedding_loss': ('hinge_embedding_loss(Tensor input, Tensor target, double margin=1.0, '
                                    'int64_t reduction=at::Reduction::Mean)',),
           'histc': ('histc(Tensor input, int64_t bins=100, Scalar min=0, Scalar max=0, *, Tensor '
                     'out=None)',),
           'histogram': ('histogram(Tensor input, Tensor bins, *, Tensor? weight=None, bool density=False, '
                         'TensorList[2] out=None)',
                         'histogram(Tensor input, int64_t bins=100, *, ArrayRef<double>? range=None, Tensor? '
                         'weight=None, bool density=False, TensorList[2] out=None)'),
           'histogramdd': ('histogramdd(Tensor input, int64_t bins, ArrayRef<double>? range=None, Tensor? '
                           'weight=None, bool density=False)',
                           'histogramdd(Tensor input, IntArrayRef bins, ArrayRef<double>? range=None, '
                           'Tensor? weight=None, bool density=False)',
                           'histogramdd(Tensor input, TensorList bins, ArrayRef<double>? range=None, Tensor? '
                           'weight=None, bool density=False)'),
           'hsplit': ('hsplit(Tensor input, int64_t sections)', 'hsplit(Tensor input, IntArrayRef indices)'),
           'hspmm': ('hspmm(Tensor mat1, Tensor mat2, *, Tensor out=None)',),
           'hstack': ('hstack(TensorList tensors, *, Tensor out=None)',),
           'hypot': ('hypot(Tensor input, Tensor other, *, Tensor out=None)',),
           'i0': ('i0(Tensor input, *, Tensor out=None)',),
           'i0_': ('i0_(Tensor input)',),
           'igamma': ('igamma(Tensor input, Tensor other, *, Tensor out=None)',),
           'igammac': ('igammac(Tensor input, Tensor other, *, Tensor out=None)',),
           'imag': ('imag(Tensor input)',),
           'index_add': ('index_add(Tensor input, int64_t dim, Tensor index, Tensor source, *, Scalar '
                         'alpha=1, Tensor out=None)',),
           'index_copy': ('index_copy(Tensor input, int64_t dim, Tensor index, Tensor source, *, Tensor '
                          'out=None)',),
           'index_fill': ('index_fill(Tensor input, int64_t dim, Tensor index, Tensor value)',
                          'index_fill(Tensor input, int64_t dim, Tensor index, Scalar value)'),
           'index_put': ('index_put(Tensor input, c10::List<::std::optional<Tensor>> indices, Tensor values, '
                         'bool accumulate=False)',),
           'index_put_': ('index_put_(Tensor input, c10::List<::std::optional<Tensor>> indices, Tensor '
                          'values, bool accumulate=False)',),
           'index_reduce': ('index_reduce(Tensor input, int64_t dim, Tensor index, Tensor source, '
                            'c10::string_view reduce, *, bool include_self=True, Tensor out=None)',),
           'index_select': ('index_select(Tensor input, int64_t dim, Tensor index, *, Tensor out=None)',),
           'indices_copy': ('indices_copy(Tensor input, *, Tensor out=None)',),
           'inner': ('inner(Tensor input, Tensor other, *, Tensor out=None)',),
           'instance_norm': ('instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? '
                             'running_mean, Tensor? running_var, bool use_input_stats, double momentum, '
                             'double eps, bool cudnn_enabled)',),
           'int_repr': ('int_repr(Tensor input)',),
           'inverse': ('inverse(Tensor input, *, Tensor out=None)',),
           'is_complex': ('is_complex(Tensor input)',),
           'is_conj': ('is_conj(Tensor input)',),
           'is_distributed': ('is_distributed(Tensor input)',),
           'is_floating_point': ('is_floating_point(Tensor input)',),
           'is_inference': ('is_inference(Tensor input)',),
           'is_neg': ('is_neg(Tensor input)',),
           'is_nonzero': ('is_nonzero(Tensor input)',),
           'is_same_size': ('is_same_size(Tensor input, Tensor other)',),
           'is_signed': ('is_signed(Tensor input)',),
           'isclose': ('isclose(Tensor input, Tensor other, double rtol=1e-05, double atol=1e-08, bool '
                       'equal_nan=False)',),
           'isfinite': ('isfinite(Tensor input)',),
           'isin': ('isin(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool '
                    'invert=False, Tensor out=None)',
                    'isin(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool '
                    'invert=False, Tensor out=None)',
                    'isin(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool '
                    'invert=False, Tensor out=None)'),
           'isinf': ('isinf(Tensor input)',),
           'isnan': ('isnan(Tensor input)',),
           'isneginf': ('isneginf(Tensor input, *, Tensor out=None)',),
           'isposinf': ('isposinf(Tensor input, *, Tensor out=None)',),
           'isreal': ('isreal(Tensor input)',),
           'istft': ('istft(Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, '
                     'Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, '
                     'int64_t? length=None, bool return_complex=False)',),
           'kaiser_window': ('kaiser_window(int64_t window_length, *, ScalarType? dtype=None, Layout? '
                             'layout=None, Device? device=None, bool? pin_memory=False, bool? '
                             'requires_grad=False)',
                             'kaiser_window(int64_t window_length, bool periodic, *, ScalarType? dtype=None, '
                             'Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                             'requires_grad=False)',
                             'kaiser_window(int64_t window_length, bool periodic, double beta, *, '
                             'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                             'pin_memory=False, bool? requires_grad=False)'),
           'kl_div': ('kl_div(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, *, bool '
                      'log_target=False)',),
           'kron': ('kron(Tensor input, Tensor other, *, Tensor out=None)',),
           'kthvalue': ('kthvalue(Tensor input, SymInt k, int64_t dim=-1, bool keepdim=False, *, '
                        'TensorList[2] out=None)',),
           'layer_norm': ('layer_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? weight=None, '
                          'Tensor? bias=None, double eps=1e-05, bool cudnn_enable=True)',),
           'lcm': ('lcm(Tensor input, Tensor other, *, Tensor out=None)',),
           'lcm_': ('lcm_(Tensor input, Tensor other)',),
           'ldexp': ('ldexp(Tensor input, Tensor other, *, Tensor out=None)',),
           'ldexp_': ('ldexp_(Tensor input, Tensor other)',),
           'le': ('le(Tensor input, Tensor other, *, Tensor out=None)',
                  'le(Tensor input, Scalar other, *, Tensor out=None)'),
           'lerp': ('lerp(Tensor input, Tensor end, Tensor weight, *, Tensor out=None)',
                    'lerp(Tensor input, Tensor end, Scalar weight, *, Tensor out=None)'),
           'less': ('less(Tensor input, Tensor other, *, Tensor out=None)',
                    'less(Tensor input, Scalar other, *, Tensor out=None)'),
           'less_equal': ('less_equal(Tensor input, Tensor other, *, Tensor out=None)',
                          'less_equal(Tensor input, Scalar other, *, Tensor out=None)'),
           'lgamma': ('lgamma(Tensor input, *, Tensor out=None)',),
           'linspace': ('linspace(Tensor start, Tensor end, int64_t steps, *, Tensor out=None, ScalarType? '
                        'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                        'requires_grad=False)',
                        'linspace(Scalar start, Tensor end, int64_t steps, *, Tensor out=None, ScalarType? '
                        'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                        'requires_grad=False)',
                        'linspace(Tensor start, Scalar end, int64_t steps, *, Tensor out=None, ScalarType? '
                        'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                        'requires_grad=False)',
                        'linspace(Scalar start, Scalar end, int64_t steps, *, Tensor out=None, ScalarType? '
                        'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                        'requires_grad=False)'),
           'log': ('log(Tensor input, *, Tensor out=None)',),
           'log10': ('log10(Tensor input, *, Tensor out=None)',),
           'log10_': ('log10_(Tensor input)',),
           'log1p': ('log1p(Tensor input, *, Tensor out=None)',),
           'log1p_': ('log1p_(Tensor input)',),
           'log2': ('log2(Tensor input, *, Tensor out=None)',),
           'log2_': ('log2_(Tensor input)',),
           'log_': ('log_(Tensor input)',),
           'log_softmax': ('log_softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor '
                           'out=None)',),
           'logaddexp': ('logaddexp(Tensor input, Tensor other, *, Tensor out=None)',),
           'logaddexp2': ('logaddexp2(Tensor input, Tensor other, *, Tensor out=None)',),
           'logcumsumexp': ('logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)',),
           'logdet': ('logdet(Tensor input)',),
           'logical_and': ('logical_and(Tensor input, Tensor other, *, Tensor out=None)',),
           'logical_not': ('logical_not(Tensor input, *, Tensor out=None)',),
           'logical_or': ('logical_or(Tensor input, Tensor other, *, Tensor out=None)',),
           'logical_xor': ('logical_xor(Tensor input, Tensor other, *, Tensor out=None)',),
           'logit': ('logit(Tensor input, double? eps=None, *, Tensor out=None)',),
           'logit_': ('logit_(Tensor input, double? eps=None)',),
           'logspace': ('logspace(Tensor start, Tensor end, int64_t steps, double base=10.0, *, Tensor '
                        'out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                        'pin_memory=False, bool? requires_grad=False)',
                        'logspace(Scalar start, Tensor end, int64_t steps, double base=10.0, *, Tensor '
                        'out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                        'pin_memory=False, bool? requires_grad=False)',
                        'logspace(Tensor start, Scalar end, int64_t steps, double base=10.0, *, Tensor '
                        'out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                        'pin_memory=False, bool? requires_grad=False)',
                        'logspace(Scalar start, Scalar end, int64_t steps, double base=10.0, *, Tensor '
                        'out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                        'pin_memory=False, bool? requires_grad=False)'),
           'logsumexp': ('logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor '
                         'out=None)',),
           'lstm': ('lstm(Tensor data, Tensor batch_sizes, TensorList hx, TensorList params, bool '
                    'has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional)',
                    'lstm(Tensor input, TensorList hx, TensorList params, bool has_biases, int64_t '
                    'num_layers, double dropout, bool train, bool bidirectional, bool batch_first)'),
           'lstm_cell': ('lstm_cell(Tensor input, TensorList hx, Tensor w_ih, Tensor w_hh, Tensor? '
                         'b_ih=None, Tensor? b_hh=None)',),
           'lt': ('lt(Tensor input, Tensor other, *, Tensor out=None)',
                  'lt(Tensor input, Scalar other, *, Tensor out=None)'),
           'lu_solve': ('lu_solve(Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor out=None)',),
           'lu_unpack': ('lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool '
                         'unpack_pivots=True, *, TensorList[3] out=None)',),
           'margin_ranking_loss': ('margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, double '
                                   'margin=0.0, int64_t reduction=at::Reduction::Mean)',),
           'masked_fill': ('masked_fill(Tensor input, Tensor mask, Tensor value)',
                           'masked_fill(Tensor input, Tensor mask, Scalar value)'),
           'masked_scatter': ('masked_scatter(Tensor input, Tensor mask, Tensor source)',),
           'masked_select': ('masked_select(Tensor input, Tensor mask, *, Tensor out=None)',),
           'matmul': ('matmul(Tensor input, Tensor other, *, Tensor out=None)',),
           'matrix_exp': ('matrix_exp(Tensor input)',),
           'matrix_power': ('matrix_power(Tensor input, int64_t n, *, Tensor out=None)',),
           'max': ('max(Tensor input, *, Tensor out=None)',
                   'max(Tensor input, Tensor other, *, Tensor out=None)',
                   'max(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)'),
           'max_pool1d': ('max_pool1d(Tensor input, IntArrayRef[1] kernel_size, IntArrayRef[1] stride=None, '
                          'IntArrayRef[1] padding=0, IntArrayRef[1] dilation=1, bool ceil_mode=False)',),
           'max_pool1d_with_indices': ('max_pool1d_with_indices(Tensor input, IntArrayRef[1] kernel_size, '
                                       'IntArrayRef[1] stride=None, IntArrayRef[1] padding=0, IntArrayRef[1] '
                                       'dilation=1, bool ceil_mode=False)',),
           'max_pool2d': ('max_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] stride=None, '
                          'IntArrayRef[2] padding=0, IntArrayRef[2] dilation=1, bool ceil_mode=False)',),
           'max_pool3d': ('max_pool3d(Tensor input, IntArrayRef[3] kernel_size, IntArrayRef[3] stride=None, '
                          'IntArrayRef[3] padding=0, IntArrayRef[3] dilation=1, bool ceil_mode=False)',),
           'maximum': ('maximum(Tensor input, Tensor other, *, Tensor out=None)',),
           'mean': ('mean(Tensor input, *, ScalarType? dtype=None, Tensor out=None)',
                    'mean(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, '
                    'Tensor out=None)'),
           'median': ('median(Tensor input)',
                      'median(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)'),
           'min': ('min(Tensor input, *, Tensor out=None)',
                   'min(Tensor input, Tensor other, *, Tensor out=None)',
                   'min(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)'),
           'minimum': ('minimum(Tensor input, Tensor other, *, Tensor out=None)',),
           'miopen_batch_norm': ('miopen_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? '
                                 'running_mean, Tensor? running_var, bool training, double '
                                 'exponential_average_factor, double epsilon)',),
           'miopen_convolution': ('miopen_convolution(Tensor input, Tensor weight, Tensor? bias, '
                                  'SymIntArrayRef padding, SymIntArrayRef stride, SymIntArrayRef dilation, '
                                  'SymInt groups, bool benchmark, bool deterministic)',),
           'miopen_convolution_add_relu': ('miopen_convolution_add_relu(Tensor input, Tensor weight, Tensor '
                                           'z, Scalar? alpha, Tensor? bias, SymIntArrayRef stride, '
                                           'SymIntArrayRef padding, SymIntArrayRef dilation, SymInt '
                                           'groups)',),
           'miopen_convolution_relu': ('miopen_convolution_relu(Tensor input, Tensor weight, Tensor? bias, '
                                       'SymIntArrayRef stride, SymIntArrayRef padding, SymIntArrayRef '
                                       'dilation, SymInt groups)',),
           'miopen_convolution_transpose': ('miopen_convolution_transpose(Tensor input, Tensor weight, '
                                            'Tensor? bias, SymIntArrayRef padding, SymIntArrayRef '
                                            'output_padding, SymIntArrayRef stride, SymIntArrayRef dilation, '
                                            'SymInt groups, bool benchmark, bool deterministic)',),
           'miopen_ctc_loss': ('miopen_ctc_loss(Tensor log_probs, Tensor targets, IntArrayRef input_lengths, '
                               'IntArrayRef target_lengths, int64_t blank, bool deterministic, bool '
                               'zero_infinity)',
                               'miopen_ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, '
                               'Tensor target_lengths, int64_t blank, bool deterministic, bool '
                               'zero_infinity)'),
           'miopen_depthwise_convolution': ('miopen_depthwise_convolution(Tensor input, Tensor weight, '
                                            'Tensor? bias, SymIntArrayRef padding, SymIntArrayRef stride, '
                                            'SymIntArrayRef dilation, SymInt groups, bool benchmark, bool '
                                            'deterministic)',),
           'miopen_rnn': ('miopen_rnn(Tensor input, TensorList weight, int64_t weight_stride0, Tensor hx, '
                          'Tensor? cx, int64_t mode, int64_t hidden_size, int64_t num_layers, bool '
                          'batch_first, double dropout, bool train, bool bidirectional, IntArrayRef '
                          'batch_sizes, Tensor? dropout_state)',),
           'mkldnn_adaptive_avg_pool2d': ('mkldnn_adaptive_avg_pool2d(Tensor input, IntArrayRef[2] '
                                          'output_size, *, Tensor out=None)',),
           'mkldnn_convolution': ('mkldnn_convolution(Tensor input, Tensor weight, Tensor? bias, '
                                  'SymIntArrayRef padding, SymIntArrayRef stride, SymIntArrayRef dilation, '
                                  'SymInt groups)',),
           'mkldnn_linear_backward_weights': ('mkldnn_linear_backward_weights(Tensor grad_output, Tensor '
                                              'input, Tensor weight, bool bias_defined)',),
           'mkldnn_max_pool2d': ('mkldnn_max_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] '
                                 'stride=None, IntArrayRef[2] padding=0, IntArrayRef[2] dilation=1, bool '
                                 'ceil_mode=False)',),
           'mkldnn_max_pool3d': ('mkldnn_max_pool3d(Tensor input, IntArrayRef[3] kernel_size, IntArrayRef[3] '
                                 'stride=None, IntArrayRef[3] padding=0, IntArrayRef[3] dilation=1, bool '
                                 'ceil_mode=False)',),
           'mkldnn_rnn_layer': ('mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor '
                                'weight2, Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, IntArrayRef '
                                'batch_sizes, int64_t mode, int64_t hidden_size, int64_t num_layers, bool '
                                'has_biases, bool bidirectional, bool batch_first, bool train)',),
           'mm': ('mm(Tensor input, Tensor mat2, *, Tensor out=None)',
                  'mm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)'),
           'mode': ('mode(Tensor input, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None)',),
           'moveaxis': ('moveaxis(Tensor input, int64_t source, int64_t destination)',
                        'moveaxis(Tensor input, IntArrayRef source, IntArrayRef destination)'),
           'movedim': ('movedim(Tensor input, int64_t source, int64_t destination)',
                       'movedim(Tensor input, IntArrayRef source, IntArrayRef destination)'),
           'msort': ('msort(Tensor input, *, Tensor out=None)',),
           'mul': ('mul(Tensor input, Tensor other, *, Tensor out=None)',),
           'multinomial': ('multinomial(Tensor input, SymInt num_samples, bool replacement=False, *, '
                           'Generator? generator=None, Tensor out=None)',),
           'multiply': ('multiply(Tensor input, Tensor other, *, Tensor out=None)',
                        'multiply(Tensor input, Scalar other)'),
           'mv': ('mv(Tensor input, Tensor vec, *, Tensor out=None)',),
           'mvlgamma': ('mvlgamma(Tensor input, int64_t p, *, Tensor out=None)',),
           'nan_to_num': ('nan_to_num(Tensor input, double? nan=None, double? posinf=None, double? '
                          'neginf=None, *, Tensor out=None)',),
           'nan_to_num_': ('nan_to_num_(Tensor input, double? nan=None, double? posinf=None, double? '
                           'neginf=None)',),
           'nanmean': ('nanmean(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? '
                       'dtype=None, Tensor out=None)',),
           'nanmedian': ('nanmedian(Tensor input)',
                         'nanmedian(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] '
                         'out=None)'),
           'nanquantile': ('nanquantile(Tensor input, Tensor q, int64_t? dim=None, bool keepdim=False, *, '
                           'c10::string_view interpolation="linear", Tensor out=None)',
                           'nanquantile(Tensor input, double q, int64_t? dim=None, bool keepdim=False, *, '
                           'c10::string_view interpolation="linear", Tensor out=None)'),
           'nansum': ('nansum(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? '
                      'dtype=None, Tensor out=None)',),
           'narrow': ('narrow(Tensor input, int64_t dim, Tensor start, SymInt length)',
                      'narrow(Tensor input, int64_t dim, SymInt start, SymInt length)'),
           'narrow_copy': ('narrow_copy(Tensor input, int64_t dim, SymInt start, SymInt length, *, Tensor '
                           'out=None)',),
           'native_batch_norm': ('native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? '
                                 'running_mean, Tensor? running_var, bool training, double momentum, double '
                                 'eps, *, TensorList[3] out=None)',),
           'native_channel_shuffle': ('native_channel_shuffle(Tensor input, SymInt groups)',),
           'native_dropout': ('native_dropout(Tensor input, double p, bool? train)',),
           'native_group_norm': ('native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, '
                                 'SymInt C, SymInt HxW, int64_t group, double eps)',),
           'native_layer_norm': ('native_layer_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? '
                                 'weight, Tensor? bias, double eps)',),
           'native_norm': ('native_norm(Tensor input, Scalar p=2)',
                           'native_norm(Tensor input, Scalar? p, IntArrayRef[1] dim, bool keepdim, '
                           'ScalarType? dtype)'),
           'ne': ('ne(Tensor input, Tensor other, *, Tensor out=None)',
                  'ne(Tensor input, Scalar other, *, Tensor out=None)'),
           'neg': ('neg(Tensor input, *, Tensor out=None)',),
           'neg_': ('neg_(Tensor input)',),
           'negative': ('negative(Tensor input, *, Tensor out=None)',),
           'negative_': ('negative_(Tensor input)',),
           'nextafter': ('nextafter(Tensor input, Tensor other, *, Tensor out=None)',),
           'nonzero_static': ('nonzero_static(Tensor input, *, SymInt size, int64_t fill_value=-1, Tensor '
                              'out=None)',),
           'norm_except_dim': ('norm_except_dim(Tensor v, int64_t pow=2, int64_t dim=0)',),
           'normal': ('normal(Tensor mean, Tensor std, *, Generator? generator=None, Tensor out=None)',
                      'normal(Tensor mean, double std=1, *, Generator? generator=None, Tensor out=None)',
                      'normal(double mean, Tensor std, *, Generator? generator=None, Tensor out=None)',
                      'normal(double mean, double std, SymIntArrayRef size, *, Generator? generator=None, '
                      'Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
                      'bool? pin_memory=False, bool? requires_grad=False)'),
           'not_equal': ('not_equal(Tensor input, Tensor other, *, Tensor out=None)',
                         'not_equal(Tensor input, Scalar other, *, Tensor out=None)'),
           'nuclear_norm': ('nuclear_norm(Tensor input, IntArrayRef[2] dim, bool keepdim=False, *, Tensor '
                            'out=None)',
                            'nuclear_norm(Tensor input, bool keepdim=False, *, Tensor out=None)'),
           'ones': ('ones(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? '
                    'layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
           'ones_like': ('ones_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? '
                         'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                         'bool? requires_grad=False)',),
           'orgqr': ('orgqr(Tensor input, Tensor input2, *, Tensor out=None)',),
           'ormqr': ('ormqr(Tensor input, Tensor input2, Tensor input3, bool left=True, bool '
                     'transpose=False, *, Tensor out=None)',),
           'outer': ('outer(Tensor input, Tensor vec2, *, Tensor out=None)',),
           'pairwise_distance': ('pairwise_distance(Tensor x1, Tensor x2, double p=2, double eps=1e-06, bool '
                                 'keepdim=False)',),
           'pdist': ('pdist(Tensor input, double p=2)',),
           'permute': ('permute(Tensor input, IntArrayRef dims)',),
           'permute_copy': ('permute_copy(Tensor input, IntArrayRef dims, *, Tensor out=None)',),
           'pinverse': ('pinverse(Tensor input, double rcond=1e-15)',),
           'pixel_shuffle': ('pixel_shuffle(Tensor input, int64_t upscale_factor)',),
           'pixel_unshuffle': ('pixel_unshuffle(Tensor input, int64_t downscale_factor)',),
           'poisson': ('poisson(Tensor input, Generator? generator=None)',),
           'poisson_nll_loss': ('poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, '
                                'double eps, int64_t reduction)',),
           'polar': ('polar(Tensor abs, Tensor angle, *, Tensor out=None)',),
           'polygamma': ('polygamma(int64_t n, Tensor input, *, Tensor out=None)',),
           'positive': ('positive(Tensor input)',),
           'pow': ('pow(Tensor input, Tensor exponent, *, Tensor out=None)',
                   'pow(Scalar self, Tensor exponent, *, Tensor out=None)',
                   'pow(Tensor input, Scalar exponent, *, Tensor out=None)'),
           'prelu': ('prelu(Tensor input, Tensor weight)',),
           'prod': ('prod(Tensor input, *, ScalarType? dtype=None)',
                    'prod(Tensor input, int64_t dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor '
                    'out=None)'),
           'promote_types': ('promote_types(ScalarType type1, ScalarType type2)',),
           'put': ('put(Tensor input, Tensor index, Tensor source, bool accumulate=False)',),
           'q_per_channel_axis': ('q_per_channel_axis(Tensor input)',),
           'q_per_channel_scales': ('q_per_channel_scales(Tensor input)',),
           'q_per_channel_zero_points': ('q_per_channel_zero_points(Tensor input)',),
           'q_scale': ('q_scale(Tensor input)',),
           'q_zero_point': ('q_zero_point(Tensor input)',),
           'qr': ('qr(Tensor input, bool some=True, *, TensorList[2] out=None)',),
           'quantile': ('quantile(Tensor input, Tensor q, int64_t? dim=None, bool keepdim=False, *, '
                        'c10::string_view interpolation="linear", Tensor out=None)',
                        'quantile(Tensor input, double q, int64_t? dim=None, bool keepdim=False, *, '
                        'c10::string_view interpolation="linear", Tensor out=None)'),
           'quantize_per_channel': ('quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, '
                                    'int64_t axis, ScalarType dtype)',),
           'quantize_per_tensor': ('quantize_per_tensor(Tensor input, Tensor scale, Tensor zero_point, '
                                   'ScalarType dtype)',
                                   'quantize_per_tensor(Tensor input, double scale, int64_t zero_point, '
                                   'ScalarType dtype)',
                                   'quantize_per_tensor(TensorList tensors, Tensor scales, Tensor '
                                   'zero_points, ScalarType dtype)'),
           'quantize_per_tensor_dynamic': ('quantize_per_tensor_dynamic(Tensor input, ScalarType dtype, bool '
                                           'reduce_range)',),
           'quantized_batch_norm': ('quantized_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor '
                                    'mean, Tensor var, double eps, double output_scale, int64_t '
                                    'output_zero_point)',),
           'quantized_gru_cell': ('quantized_gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, '
                                  'Tensor b_ih, Tensor b_hh, Tensor packed_ih, Tensor packed_hh, Tensor '
                                  'col_offsets_ih, Tensor col_offsets_hh, Scalar scale_ih, Scalar scale_hh, '
                                  'Scalar zero_point_ih, Scalar zero_point_hh)',),
           'quantized_lstm_cell': ('quantized_lstm_cell(Tensor input, TensorList hx, Tensor w_ih, Tensor '
                                   'w_hh, Tensor b_ih, Tensor b_hh, Tensor packed_ih, Tensor packed_hh, '
                                   'Tensor col_offsets_ih, Tensor col_offsets_hh, Scalar scale_ih, Scalar '
                                   'scale_hh, Scalar zero_point_ih, Scalar zero_point_hh)',),
           'quantized_max_pool1d': ('quantized_max_pool1d(Tensor input, IntArrayRef[1] kernel_size, '
                                    'IntArrayRef[1] stride=None, IntArrayRef[1] padding=0, IntArrayRef[1] '
                                    'dilation=1, bool ceil_mode=False)',),
           'quantized_max_pool2d': ('quantized_max_pool2d(Tensor input, IntArrayRef[2] kernel_size, '
                                    'IntArrayRef[2] stride=None, IntArrayRef[2] padding=0, IntArrayRef[2] '
                                    'dilation=1, bool ceil_mode=False)',),
           'quantized_max_pool3d': ('quantized_max_pool3d(Tensor input, IntArrayRef[3] kernel_size, '
                                    'IntArrayRef[3] stride=None, IntArrayRef[3] padding=0, IntArrayRef[3] '
                                    'dilation=1, bool ceil_mode=False)',),
           'quantized_rnn_relu_cell': ('quantized_rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor '
                                       'w_hh, Tensor b_ih, Tensor b_hh, Tensor packed_ih, Tensor packed_hh, '
                                       'Tensor col_offsets_ih, Tensor col_offsets_hh, Scalar scale_ih, '
                                       'Scalar scale_hh, Scalar zero_point_ih, Scalar zero_point_hh)',),
           'quantized_rnn_tanh_cell': ('quantized_rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor '
                                       'w_hh, Tensor b_ih, Tensor b_hh, Tensor packed_ih, Tensor packed_hh, '
                                       'Tensor col_offsets_ih, Tensor col_offsets_hh, Scalar scale_ih, '
                                       'Scalar scale_hh, Scalar zero_point_ih, Scalar zero_point_hh)',),
           'rad2deg': ('rad2deg(Tensor input, *, Tensor out=None)',),
           'rad2deg_': ('rad2deg_(Tensor input)',),
           'rand': ('rand(SymIntArrayRef size, *, Generator? generator, Tensor out=None, ScalarType? '
                    'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                    'requires_grad=False)',
                    'rand(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? '
                    'layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)'),
           'rand_like': ('rand_like(Tensor input, *, Generator? generator, MemoryFormat? memory_format=None, '
                         'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                         'pin_memory=False, bool? requires_grad=False)',
                         'rand_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? '
                         'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                         'bool? requires_grad=False)'),
           'randint': ('randint(SymInt high, SymIntArrayRef size, *, Generator? generator, Tensor out=None, '
                       'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                       'pin_memory=False, bool? requires_grad=False)',
                       'randint(SymInt high, SymIntArrayRef size, *, Tensor out=None, ScalarType? '
                       'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                       'requires_grad=False)',
                       'randint(SymInt low, SymInt high, SymIntArrayRef size, *, Generator? generator, '
                       'Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
                       'bool? pin_memory=False, bool? requires_grad=False)',
                       'randint(SymInt low, SymInt high, SymIntArrayRef size, *, Tensor out=None, '
                       'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                       'pin_memory=False, bool? requires_grad=False)'),
           'randint_like': ('randint_like(Tensor input, SymInt low, SymInt high, *, Generator? generator, '
                            'MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, '
                            'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',
                            'randint_like(Tensor input, SymInt low, SymInt high, *, MemoryFormat? '
                            'memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                            'device=None, bool? pin_memory=False, bool? requires_grad=False)',
                            'randint_like(Tensor input, Tensor high, *, Generator? generator, MemoryFormat? '
                            'memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                            'device=None, bool? pin_memory=False, bool? requires_grad=False)',
                            'randint_like(Tensor input, Tensor high, *, MemoryFormat? memory_format=None, '
                            'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                            'pin_memory=False, bool? requires_grad=False)',
                            'randint_like(Tensor input, SymInt high, *, Generator? generator, MemoryFormat? '
                            'memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                            'device=None, bool? pin_memory=False, bool? requires_grad=False)',
                            'randint_like(Tensor input, SymInt high, *, MemoryFormat? memory_format=None, '
                            'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? '
                            'pin_memory=False, bool? requires_grad=False)'),
           'randn': ('randn(SymIntArrayRef size, *, Generator? generator, Tensor out=None, ScalarType? '
                     'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                     'requires_grad=False)',
                     'randn(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? '
                     'layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)'),
           'randn_like': ('randn_like(Tensor input, *, Generator? generator, MemoryFormat? '
                          'memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? '
                          'device=None, bool? pin_memory=False, bool? requires_grad=False)',
                          'randn_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? '
                          'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                          'bool? requires_grad=False)'),
           'randperm': ('randperm(SymInt n, *, Generator? generator, Tensor out=None, ScalarType? '
                        'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? '
                        'requires_grad=False)',
                        'randperm(SymInt n, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, '
                        'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)'),
           'ravel': ('ravel(Tensor input)',),
           'real': ('real(Tensor input)',),
           'reciprocal': ('reciprocal(Tensor input, *, Tensor out=None)',),
           'reciprocal_': ('reciprocal_(Tensor input)',),
           'relu': ('relu(Tensor input)',),
           'relu_': ('relu_(Tensor input)',),
           'remainder': ('remainder(Tensor input, Tensor other, *, Tensor out=None)',
                         'remainder(Scalar self, Tensor other)',
                         'remainder(Tensor input, Scalar other, *, Tensor out=None)'),
           'renorm': ('renorm(Tensor input, Scalar p, int64_t dim, Scalar maxnorm, *, Tensor out=None)',),
           'repeat_interleave': ('repeat_interleave(Tensor input, Tensor repeats, int64_t? dim=None, *, '
                                 'SymInt? output_size=None)',
                                 'repeat_interleave(Tensor repeats, *, SymInt? output_size=None)',
                                 'repeat_interleave(Tensor input, SymInt repeats, int64_t? dim=None, *, '
                                 'SymInt? output_size=None)'),
           'reshape': ('reshape(Tensor input, SymIntArrayRef shape)',),
           'resize_as_': ('resize_as_(Tensor input, Tensor the_template, *, MemoryFormat? '
                          'memory_format=None)',),
           'resize_as_sparse_': ('resize_as_sparse_(Tensor input, Tensor the_template)',),
           'resolve_conj': ('resolve_conj(Tensor input)',),
           'resolve_neg': ('resolve_neg(Tensor input)',),
           'result_type': ('result_type(Tensor tensor, Tensor other)',
                           'result_type(Scalar scalar, Tensor tensor)',
                           'result_type(Tensor tensor, Scalar other)',
                           'result_type(Scalar scalar1, Scalar scalar2)'),
           'rms_norm': ('rms_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? weight=None, '
                        'double? eps=None)',),
           'rnn_relu': ('rnn_relu(Tensor data, Tensor batch_sizes, Tensor hx, TensorList params, bool '
                        'has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional)',
                        'rnn_relu(Tensor input, Tensor hx, TensorList params, bool has_biases, int64_t '
                        'num_layers, double dropout, bool train, bool bidirectional, bool batch_first)'),
           'rnn_relu_cell': ('rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? '
                             'b_ih=None, Tensor? b_hh=None)',),
           'rnn_tanh': ('rnn_tanh(Tensor data, Tensor batch_sizes, Tensor hx, TensorList params, bool '
                        'has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional)',
                        'rnn_tanh(Tensor input, Tensor hx, TensorList params, bool has_biases, int64_t '
                        'num_layers, double dropout, bool train, bool bidirectional, bool batch_first)'),
           'rnn_tanh_cell': ('rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? '
                             'b_ih=None, Tensor? b_hh=None)',),
           'roll': ('roll(Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None)',),
           'rot90': ('rot90(Tensor input, int64_t k=1, IntArrayRef dims={0,1})',),
           'round': ('round(Tensor input, *, Tensor out=None)',
                     'round(Tensor input, *, int64_t decimals, Tensor out=None)'),
           'round_': ('round_(Tensor input)', 'round_(Tensor input, *, int64_t decimals)'),
           'row_indices_copy': ('row_indices_copy(Tensor input, *, Tensor out=None)',),
           'row_stack': ('row_stack(TensorList tensors, *, Tensor out=None)',),
           'rrelu': ('rrelu(Tensor input, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool '
                     'training=False, Generator? generator=None)',),
           'rrelu_': ('rrelu_(Tensor input, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool '
                      'training=False, Generator? generator=None)',),
           'rsqrt': ('rsqrt(Tensor input, *, Tensor out=None)',),
           'rsqrt_': ('rsqrt_(Tensor input)',),
           'rsub': ('rsub(Tensor input, Tensor other, *, Scalar alpha=1)',
                    'rsub(Tensor input, Scalar other, Scalar alpha=1)'),
           'scalar_tensor': ('scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, '
                             'Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
           'scatter': ('scatter(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)',
                       'scatter(Tensor input, int64_t dim, Tensor index, Tensor src, *, c10::string_view '
                       'reduce, Tensor out=None)',
                       'scatter(Tensor input, int64_t dim, Tensor index, Scalar value, *, Tensor out=None)',
                       'scatter(Tensor input, int64_t dim, Tensor index, Scalar value, *, c10::string_view '
                       'reduce, Tensor out=None)'),
           'scatter_add': ('scatter_add(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor '
                           'out=None)',),
           'scatter_reduce': ('scatter_reduce(Tensor input, int64_t dim, Tensor index, Tensor src, '
                              'c10::string_view reduce, *, bool include_self=True, Tensor out=None)',),
           'searchsorted': ('searchsorted(Tensor sorted_sequence, Tensor input, *, bool out_int32=False, '
                            'bool right=False, c10::string_view? side=None, Tensor? sorter=None, Tensor '
                            'out=None)',
                            'searchsorted(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool '
                            'right=False, c10::string_view? side=None, Tensor? sorter=None, Tensor '
                            'out=None)'),
           'segment_reduce': ('segment_reduce(Tensor data, c10::string_view reduce, *, Tensor? lengths=None, '
                              'Tensor? indices=None, Tensor? offsets=None, int64_t axis=0, bool '
                              'unsafe=False, Scalar? initial=None)',),
           'select': ('select(Tensor input, int64_t dim, SymInt index)',),
           'select_copy': ('select_copy(Tensor input, int64_t dim, SymInt index, *, Tensor out=None)',),
           'select_scatter': ('select_scatter(Tensor input, Tensor src, int64_t dim, SymInt index)',),
           'selu': ('selu(Tensor input)',),
           'selu_': ('selu_(Tensor input)',),
           'sgn': ('sgn(Tensor input, *, Tensor out=None)',),
           'sigmoid': ('sigmoid(Tensor input, *, Tensor out=None)',),
           'sigmoid_': ('sigmoid_(Tensor input)',),
           'sign': ('sign(Tensor input, *, Tensor out=None)',),
           'signbit': ('signbit(Tensor input, *, Tensor out=None)',),
           'sin': ('sin(Tensor input, *, Tensor out=None)',),
           'sin_': ('sin_(Tensor input)',),
           'sinc': ('sinc(Tensor input, *, Tensor out=None)',),
           'sinc_': ('sinc_(Tensor input)',),
           'sinh': ('sinh(Tensor input, *, Tensor out=None)',),
           'sinh_': ('sinh_(Tensor input)',),
           'slice_copy': ('slice_copy(Tensor input, int64_t dim=0, SymInt? start=None, SymInt? end=None, '
                          'SymInt step=1, *, Tensor out=None)',),
           'slice_inverse': ('slice_inverse(Tensor input, Tensor src, int64_t dim=0, SymInt? start=None, '
                             'SymInt? end=None, SymInt step=1)',),
           'slice_scatter': ('slice_scatter(Tensor input, Tensor src, int64_t dim=0, SymInt? start=None, '
                             'SymInt? end=None, SymInt step=1, *, Tensor out=None)',),
           'slogdet': ('slogdet(Tensor input, *, TensorList[2] out=None)',),
           'smm': ('smm(Tensor input, Tensor mat2)',),
           'softmax': ('softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)',),
           'sort': ('sort(Tensor input, *, bool? stable, int64_t dim=-1, bool descending=False, '
                    'TensorList[2] out=None)',
                    'sort(Tensor input, int64_t dim=-1, bool descending=False, *, TensorList[2] out=None)'),
           'split_copy': ('split_copy(Tensor input, SymInt split_size, int64_t dim=0, *, TensorList '
                          'out=None)',),
           'split_with_sizes': ('split_with_sizes(Tensor input, SymIntArrayRef split_sizes, int64_t dim=0)',),
           'split_with_sizes_copy': ('split_with_sizes_copy(Tensor input, SymIntArrayRef split_sizes, '
                                     'int64_t dim=0, *, TensorList out=None)',),
           'sqrt': ('sqrt(Tensor input, *, Tensor out=None)',),
           'sqrt_': ('sqrt_(Tensor input)',),
           'square': ('square(Tensor input, *, Tensor out=None)',),
           'square_': ('square_(Tensor input)',),
           'squeeze': ('squeeze(Tensor input)',
                       'squeeze(Tensor input, int64_t dim)',
                       'squeeze(Tensor input, IntArrayRef dim)'),
           'squeeze_copy': ('squeeze_copy(Tensor input, *, Tensor out=None)',
                            'squeeze_copy(Tensor input, int64_t dim, *, Tensor out=None)',
                            'squeeze_copy(Tensor input, IntArrayRef dim, *, Tensor out=None)'),
           'sspaddmm': ('sspaddmm(Scalar beta, Tensor input, Scalar alpha, Tensor mat1, Tensor '
                        'mat2)|deprecated',
                        'sspaddmm(Scalar beta, Tensor input, Tensor mat1, Tensor mat2)|deprecated',
                        'sspaddmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, '
                        'Tensor out=None)'),
           'stack': ('stack(TensorList tensors, int64_t dim=0, *, Tensor out=None)',),
           'std': ('std(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor '
                   'out=None)',
                   'std(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool '
                   'keepdim=False, Tensor out=None)',
                   'std(Tensor input, bool unbiased=True)'),
           'std_mean': ('std_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)',
                        'std_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool '
                        'keepdim=False)',
                        'std_mean(Tensor input, bool unbiased=True)'),
           'sub': ('sub(Tensor input, Scalar alpha, Tensor other, *, Tensor out=None)|deprecated',
                   'sub(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)'),
           'subtract': ('subtract(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)',
                        'subtract(Tensor input, Scalar other, Scalar alpha=1)'),
           'sum': ('sum(Tensor input, *, ScalarType? dtype=None)',
                   'sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, '
                   'Tensor out=None)'),
           'svd': ('svd(Tensor input, bool some=True, bool compute_uv=True, *, TensorList[3] out=None)',),
           'swapaxes': ('swapaxes(Tensor input, int64_t axis0, int64_t axis1)',),
           'swapdims': ('swapdims(Tensor input, int64_t dim0, int64_t dim1)',),
           'sym_constrain_range': ('sym_constrain_range(Scalar size, *, int64_t? min=None, int64_t? '
                                   'max=None)',),
           'sym_constrain_range_for_size': ('sym_constrain_range_for_size(Scalar size, *, int64_t? min=None, '
                                            'int64_t? max=None)',),
           't': ('t(Tensor input)',),
           't_copy': ('t_copy(Tensor input, *, Tensor out=None)',),
           'take': ('take(Tensor input, Tensor index, *, Tensor out=None)',),
           'take_along_dim': ('take_along_dim(Tensor input, Tensor indices, int64_t? dim=None, *, Tensor '
                              'out=None)',),
           'tan': ('tan(Tensor input, *, Tensor out=None)',),
           'tan_': ('tan_(Tensor input)',),
           'tanh': ('tanh(Tensor input, *, Tensor out=None)',),
           'tanh_': ('tanh_(Tensor input)',),
           'tensor_split': ('tensor_split(Tensor input, SymIntArrayRef indices, int64_t dim=0)',
                            'tensor_split(Tensor input, Tensor tensor_indices_or_sections, int64_t dim=0)',
                            'tensor_split(Tensor input, SymInt sections, int64_t dim=0)'),
           'threshold': ('threshold(Tensor input, Scalar threshold, Scalar value, *, Tensor out=None)',),
           'threshold_': ('threshold_(Tensor input, Scalar threshold, Scalar value)',),
           'tile': ('tile(Tensor input, SymIntArrayRef dims)',),
           'topk': ('topk(Tensor input, SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True, *, '
                    'TensorList[2] out=None)',),
           'trace': ('trace(Tensor input)',),
           'transpose': ('transpose(Tensor input, int64_t dim0, int64_t dim1)',),
           'transpose_copy': ('transpose_copy(Tensor input, int64_t dim0, int64_t dim1, *, Tensor '
                              'out=None)',),
           'trapezoid': ('trapezoid(Tensor y, Tensor x, *, int64_t dim=-1)',
                         'trapezoid(Tensor y, *, Scalar dx=1, int64_t dim=-1)'),
           'trapz': ('trapz(Tensor y, *, double dx=1, int64_t dim=-1)',
                     'trapz(Tensor y, Tensor x, *, int64_t dim=-1)'),
           'triangular_solve': ('triangular_solve(Tensor input, Tensor A, bool upper=True, bool '
                                'transpose=False, bool unitriangular=False, *, TensorList[2] out=None)',),
           'tril': ('tril(Tensor input, SymInt diagonal=0, *, Tensor out=None)',),
           'tril_indices': ('tril_indices(int64_t row, int64_t col, int64_t offset=0, *, ScalarType? '
                            'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                            'bool? requires_grad=False)',),
           'triplet_margin_loss': ('triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, '
                                   'double margin=1.0, double p=2, double eps=1e-06, bool swap=False, '
                                   'int64_t reduction=at::Reduction::Mean)',),
           'triu': ('triu(Tensor input, SymInt diagonal=0, *, Tensor out=None)',),
           'triu_indices': ('triu_indices(int64_t row, int64_t col, int64_t offset=0, *, ScalarType? '
                            'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                            'bool? requires_grad=False)',),
           'true_divide': ('true_divide(Tensor input, Tensor other, *, Tensor out=None)',
                           'true_divide(Tensor input, Scalar other)'),
           'trunc': ('trunc(Tensor input, *, Tensor out=None)',),
           'trunc_': ('trunc_(Tensor input)',),
           'unbind': ('unbind(Tensor input, int64_t dim=0)',),
           'unbind_copy': ('unbind_copy(Tensor input, int64_t dim=0, *, TensorList out=None)',),
           'unflatten': ('unflatten(Tensor input, int64_t dim, SymIntArrayRef sizes)',),
           'unfold_copy': ('unfold_copy(Tensor input, int64_t dimension, int64_t size, int64_t step, *, '
                           'Tensor out=None)',),
           'unique_dim': ('unique_dim(Tensor input, int64_t dim, bool sorted=True, bool '
                          'return_inverse=False, bool return_counts=False)',),
           'unsafe_chunk': ('unsafe_chunk(Tensor input, int64_t chunks, int64_t dim=0)',),
           'unsafe_split': ('unsafe_split(Tensor input, SymInt split_size, int64_t dim=0)',),
           'unsafe_split_with_sizes': ('unsafe_split_with_sizes(Tensor input, SymIntArrayRef split_sizes, '
                                       'int64_t dim=0)',),
           'unsqueeze': ('unsqueeze(Tensor input, int64_t dim)',),
           'unsqueeze_copy': ('unsqueeze_copy(Tensor input, int64_t dim, *, Tensor out=None)',),
           'values_copy': ('values_copy(Tensor input, *, Tensor out=None)',),
           'vander': ('vander(Tensor x, int64_t? N=None, bool increasing=False)',),
           'var': ('var(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor '
                   'out=None)',
                   'var(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool '
                   'keepdim=False, Tensor out=None)',
                   'var(Tensor input, bool unbiased=True)'),
           'var_mean': ('var_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)',
                        'var_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool '
                        'keepdim=False)',
                        'var_mean(Tensor input, bool unbiased=True)'),
           'vdot': ('vdot(Tensor input, Tensor other, *, Tensor out=None)',),
           'view_as_complex': ('view_as_complex(Tensor input)',),
           'view_as_complex_copy': ('view_as_complex_copy(Tensor input, *, Tensor out=None)',),
           'view_as_real': ('view_as_real(Tensor input)',),
           'view_as_real_copy': ('view_as_real_copy(Tensor input, *, Tensor out=None)',),
           'view_copy': ('view_copy(Tensor input, ScalarType dtype, *, Tensor out=None)',
                         'view_copy(Tensor input, SymIntArrayRef size, *, Tensor out=None)'),
           'vsplit': ('vsplit(Tensor input, int64_t sections)', 'vsplit(Tensor input, IntArrayRef indices)'),
           'vstack': ('vstack(TensorList tensors, *, Tensor out=None)',),
           'where': ('where(Tensor condition)',
                     'where(Tensor condition, Tensor input, Tensor other, *, Tensor out=None)',
                     'where(Tensor condition, Scalar self, Tensor other)',
                     'where(Tensor condition, Tensor input, Scalar other)',
                     'where(Tensor condition, Scalar self, Scalar other)'),
           'xlogy': ('xlogy(Tensor input, Tensor other, *, Tensor out=None)',
                     'xlogy(Scalar self, Tensor other, *, Tensor out=None)',
                     'xlogy(Tensor input, Scalar other, *, Tensor out=None)'),
           'xlogy_': ('xlogy_(Tensor input, Tensor other)', 'xlogy_(Tensor input, Scalar other)'),
           'zero_': ('zero_(Tensor input)',),
           'zeros': ('zeros(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, Layout? '
                     'layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)',),
           'zeros_like': ('zeros_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? '
                          'dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, '
                          'bool? requires_grad=False)',)}}

# nn.functional's names that are native functions: name -> (namespace, parser name)
FUNCTIONAL = {'adaptive_avg_pool1d': ('torch', 'adaptive_avg_pool1d'),
 'avg_pool1d': ('torch', 'avg_pool1d'),
 'avg_pool2d': ('nn', 'avg_pool2d'),
 'avg_pool3d': ('nn', 'avg_pool3d'),
 'bilinear': ('torch', 'bilinear'),
 'celu_': ('torch', 'celu_'),
 'channel_shuffle': ('torch', 'channel_shuffle'),
 'conv1d': ('torch', 'conv1d'),
 'conv2d': ('torch', 'conv2d'),
 'conv3d': ('torch', 'conv3d'),
 'conv_tbc': ('torch', 'conv_tbc'),
 'conv_transpose1d': ('torch', 'conv_transpose1d'),
 'conv_transpose2d': ('torch', 'conv_transpose2d'),
 'conv_transpose3d': ('torch', 'conv_transpose3d'),
 'cosine_similarity': ('torch', 'cosine_similarity'),
 'elu_': ('nn', 'elu_'),
 'gelu': ('nn', 'gelu'),
 'hardshrink': ('torch', 'hardshrink'),
 'hardtanh_': ('nn', 'hardtanh_'),
 'leaky_relu_': ('nn', 'leaky_relu_'),
 'linear': ('nn', 'linear'),
 'logsigmoid': ('nn', 'log_sigmoid'),
 'native_channel_shuffle': ('torch', 'native_channel_shuffle'),
 'one_hot': ('nn', 'one_hot'),
 'pairwise_distance': ('torch', 'pairwise_distance'),
 'pdist': ('torch', 'pdist'),
 'pixel_shuffle': ('torch', 'pixel_shuffle'),
 'pixel_unshuffle': ('torch', 'pixel_unshuffle'),
 'prelu': ('torch', 'prelu'),
 'relu_': ('torch', 'relu_'),
 'rrelu_': ('torch', 'rrelu_'),
 'scaled_dot_product_attention': ('nn', 'scaled_dot_product_attention'),
 'selu_': ('torch', 'selu_'),
 'softplus': ('nn', 'softplus'),
 'softshrink': ('nn', 'softshrink'),
 'threshold_': ('torch', 'threshold_')}
