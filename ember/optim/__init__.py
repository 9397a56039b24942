"""ember.optim: optimizers, learning-rate schedulers (lr_scheduler) and weight averaging (swa_utils)."""

from . import lr_scheduler as lr_scheduler
from . import swa_utils as swa_utils

# (area N: Adafactor, Muon, swap_in_optimizer_params_and_state)
from ._adafactor import Adafactor as Adafactor
from ._muon import Muon as Muon
from ._stateless import swap_in_optimizer_params_and_state as swap_in_optimizer_params_and_state
from .adadelta import Adadelta as Adadelta
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamax import Adamax as Adamax
from .adamw import AdamW as AdamW
from .asgd import ASGD as ASGD
from .lbfgs import LBFGS as LBFGS
from .nadam import NAdam as NAdam
from .optimizer import Optimizer as Optimizer
from .radam import RAdam as RAdam
from .rmsprop import RMSprop as RMSprop
from .rprop import Rprop as Rprop
from .sgd import SGD as SGD
from .sparse_adam import SparseAdam as SparseAdam  # (area N: NOTE [ SparseAdam without sparse tensors ])


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
