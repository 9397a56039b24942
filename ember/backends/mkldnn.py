"""ember.backends.mkldnn: oneDNN is torch's CPU library; ember uses NumPy, so it reports unavailable."""

enabled = True


def is_available():
    return False
