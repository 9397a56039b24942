"""torch.utils.data._utils's layout, for code that imports from it (``from torch.utils.data._utils.collate
import default_collate``): its `collate`, `worker` and `fetch` are ember.utils.data's collate, _worker and
_fetch modules, registered under these names too."""

import sys

from .. import _fetch as fetch
from .. import _worker as worker
from .. import collate as collate
from .._worker import MP_STATUS_CHECK_INTERVAL as MP_STATUS_CHECK_INTERVAL

IS_WINDOWS = sys.platform == "win32"
HAS_NUMPY = True

for _name, _module in (("collate", collate), ("worker", worker), ("fetch", fetch)):
    sys.modules[f"{__name__}.{_name}"] = _module
del _name, _module
