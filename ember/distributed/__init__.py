"""ember.distributed: torch.distributed on MPI (mpi4py, with the MPI runtime from the `mpich` package).

Process groups, collectives, point-to-point ops and stores live in `distributed_c10d.py` and `_store.py`;
the MPI engine (building one world communicator however the ranks were started, the worker thread of
asynchronous collectives) in `_mpi.py` and `_pmi.py`; the launcher (torchrun's command line, over
mpiexec) in `run.py`; the error recording of `torch.distributed.elastic` in `elastic/`. Nothing here
imports mpi4py until a process group is made, so `import ember.distributed` stays cheap.
"""

from .._torch_alias import missing_attribute
from ._store import (
    DistBackendError as DistBackendError,
)
from ._store import (
    DistError as DistError,
)
from ._store import (
    DistNetworkError as DistNetworkError,
)
from ._store import (
    DistStoreError as DistStoreError,
)
from ._store import (
    FileStore as FileStore,
)
from ._store import (
    HashStore as HashStore,
)
from ._store import (
    PrefixStore as PrefixStore,
)
from ._store import (
    Store as Store,
)
from ._store import (
    TCPStore as TCPStore,
)
from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import __all__ as _c10d_all

__all__ = list(_c10d_all) + ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "DistError",
                             "DistStoreError", "DistNetworkError", "DistBackendError"]

__getattr__ = missing_attribute(__name__)
