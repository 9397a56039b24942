"""ember.nn.utils: gradient clipping and other model utilities (torch.nn.utils)."""

from . import parametrizations as parametrizations  # noqa: E402  (issue 5)
from . import parametrize as parametrize  # noqa: E402

# (area N: prune, stateless, skip_init, memory formats)
from . import prune as prune  # noqa: E402
from . import rnn as rnn  # noqa: E402  (issue 6: packed sequences)
from . import stateless as stateless  # noqa: E402
from .clip_grad import clip_grad_norm as clip_grad_norm
from .clip_grad import clip_grad_norm_ as clip_grad_norm_
from .clip_grad import clip_grad_value_ as clip_grad_value_
from .clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import get_total_norm as get_total_norm
from .convert_parameters import parameters_to_vector as parameters_to_vector  # noqa: E402  (issue 5)
from .convert_parameters import vector_to_parameters as vector_to_parameters  # noqa: E402
from .fusion import fuse_conv_bn_eval as fuse_conv_bn_eval  # noqa: E402
from .fusion import fuse_conv_bn_weights as fuse_conv_bn_weights  # noqa: E402
from .fusion import fuse_linear_bn_eval as fuse_linear_bn_eval  # noqa: E402
from .fusion import fuse_linear_bn_weights as fuse_linear_bn_weights  # noqa: E402
from .init import skip_init as skip_init  # noqa: E402
from .memory_format import convert_conv2d_weight_memory_format as convert_conv2d_weight_memory_format  # noqa: E402
from .memory_format import convert_conv3d_weight_memory_format as convert_conv3d_weight_memory_format  # noqa: E402
from .spectral_norm import remove_spectral_norm as remove_spectral_norm  # noqa: E402
from .spectral_norm import spectral_norm as spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm as remove_weight_norm  # noqa: E402
from .weight_norm import weight_norm as weight_norm  # noqa: E402
