"""ember.func: torch.func's composable function transforms.

`vmap` (batching rules at the dispatcher, a looping fallback), `grad`, `grad_and_value`, `vjp`, `jacrev`,
`jvp`, `linearize`, `jacfwd` (forward mode, on ember.autograd.forward_ad), `hessian`, and the module helpers
`functional_call`, `stack_module_state`, `replace_all_batch_norm_modules_`. See docs/architecture.md
("Function transforms") and NOTE [ vmap levels ] in `_batched.py`.
"""

from ._rules import set_fallback_warning_enabled as _set_vmap_fallback_warning_enabled
from ._transforms import debug_unwrap as debug_unwrap
from ._transforms import functional_call as functional_call
from ._transforms import grad as grad
from ._transforms import grad_and_value as grad_and_value
from ._transforms import hessian as hessian
from ._transforms import jacfwd as jacfwd
from ._transforms import jacrev as jacrev
from ._transforms import jvp as jvp
from ._transforms import linearize as linearize
from ._transforms import replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_
from ._transforms import stack_module_state as stack_module_state
from ._transforms import vjp as vjp
from ._transforms import vmap as vmap

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "functional_call",
    "stack_module_state",
    "replace_all_batch_norm_modules_",
    "_set_vmap_fallback_warning_enabled",
]
