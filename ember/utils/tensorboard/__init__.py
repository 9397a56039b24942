"""`torch.utils.tensorboard`: TensorBoard logging (`SummaryWriter`), on tensorboardX's event-file writer.

See NOTE [ TensorBoard on tensorboardX ] in `writer.py`.
"""

try:
    import tensorboardX as _tensorboardX  # noqa: F401
except ImportError as e:  # torch says the same when its `tensorboard` dependency is missing
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above "
                      "(ember writes event files with tensorboardX: pip install ember[tensorboard])") from e

from .writer import FileWriter as FileWriter
from .writer import RecordWriter as RecordWriter
from .writer import SummaryWriter as SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
