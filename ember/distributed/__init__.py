"""ember.distributed: torch.distributed's namespace. For now only the guard scripts call first.

NOTE [ distributed is not available yet ]
Scripts written for one machine and many call `torch.distributed.is_available()` before touching process
groups (`if dist.is_available() and dist.is_initialized(): ...`). ember has no process groups or
collectives yet (they are to run over MPI, see docs/architecture.md), so it answers False: the answer a
torch built without distributed support gives, which sends such scripts down their single-process path.
When process groups exist this returns True. Any other name fails naming what the script asked for.
"""

from .._torch_alias import missing_attribute

__all__ = ["is_available"]


def is_available():
    """Whether the distributed package can be used: False until ember has process groups.

    See NOTE [ distributed is not available yet ].
    """
    return False


__getattr__ = missing_attribute(__name__)
