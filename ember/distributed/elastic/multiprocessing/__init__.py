"""ember.distributed.elastic.multiprocessing: the `errors` module (error files, `record`)."""

from . import errors as errors
