"""ember.backends.cudnn: no cuDNN on a CPU-only install; the flags are kept so scripts may set them."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
