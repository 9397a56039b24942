"""ember.utils.data: datasets, samplers and the DataLoader, mirroring ``torch.utils.data``."""

from . import _utils as _utils
from ._worker import WorkerInfo as WorkerInfo
from ._worker import get_worker_info as get_worker_info
from .collate import default_collate as default_collate
from .collate import default_convert as default_convert
from .dataloader import DataLoader as DataLoader
from .dataloader import _DatasetKind as _DatasetKind
from .datapipes import (  # area M: the deprecated DataPipes (NOTE [ What ember has of DataPipes ])
    DataChunk,
    DFIterDataPipe,
    IterDataPipe,
    MapDataPipe,
    argument_validation,
    functional_datapipe,
    guaranteed_datapipes_determinism,
    non_deterministic,
    runtime_validation,
    runtime_validation_disabled,
)
from .dataset import ChainDataset as ChainDataset
from .dataset import ConcatDataset as ConcatDataset
from .dataset import Dataset as Dataset
from .dataset import IterableDataset as IterableDataset
from .dataset import StackDataset as StackDataset
from .dataset import Subset as Subset
from .dataset import TensorDataset as TensorDataset
from .dataset import random_split as random_split
from .distributed import DistributedSampler as DistributedSampler
from .sampler import BatchSampler as BatchSampler
from .sampler import RandomSampler as RandomSampler
from .sampler import Sampler as Sampler
from .sampler import SequentialSampler as SequentialSampler
from .sampler import SubsetRandomSampler as SubsetRandomSampler
from .sampler import WeightedRandomSampler as WeightedRandomSampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split",
           "IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled", "argument_validation"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
