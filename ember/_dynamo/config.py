"""`torch._dynamo.config`: the knobs scripts set. Plain module attributes, read where they are used."""

import os

# a frame whose guards miss this many times runs eagerly from then on (torch's warning says so)
recompile_limit = 8
cache_size_limit = 8  # torch's older name; the smaller of the two is the limit
accumulated_recompile_limit = 256
accumulated_cache_size_limit = 256
# an error inside capture (not a graph break) runs the frame eagerly instead of raising
suppress_errors = bool(os.environ.get("TORCHDYNAMO_SUPPRESS_ERRORS", ""))
verbose = bool(os.environ.get("TORCHDYNAMO_VERBOSE", ""))
# `tensor.item()` stays in the graph as a node rather than breaking (torch's default: break)
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
# dynamic shapes: a size that changed becomes dynamic on the recompile (see NOTE [ Dynamic shapes ])
automatic_dynamic_shapes = True
assume_static_by_default = True
specialize_int = False
error_on_recompile = False
inline_inbuilt_nn_modules = True
optimize_ddp = True
skip_nnmodule_hook_guards = True
guard_nn_modules = False
force_parameter_static_shapes = True
cache_size_limit_warning = True
# nn.RNN/GRU/LSTM modules are not captured (torch's "Attempted to wrap RNN, GRU, or LSTM": the frame that
# reads one runs eagerly) unless this is set, as in torch
allow_rnn = False
