"""ember.nn.utils: gradient clipping and other model utilities (torch.nn.utils)."""

from .clip_grad import clip_grad_norm as clip_grad_norm
from .clip_grad import clip_grad_norm_ as clip_grad_norm_
from .clip_grad import clip_grad_value_ as clip_grad_value_
from .clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import get_total_norm as get_total_norm
