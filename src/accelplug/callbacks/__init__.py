"""The callbacks Lightning scripts use most, one module per family, and the protocol they follow (:mod:`.base`).

Lightning's ``lightning.pytorch.callbacks`` names. Nothing here imports the Trainer: a callback gets it as
an argument of each hook and uses its public properties, so callbacks sit below ``accelplug.trainer``.
"""

from .base import Callback, Checkpoint
from .early_stopping import EarlyStopping
from .lambda_function import LambdaCallback
from .model_checkpoint import ModelCheckpoint
from .model_summary import ModelSummary, RichModelSummary
from .monitors import DeviceStatsMonitor, LearningRateMonitor
from .on_exception_checkpoint import OnExceptionCheckpoint
from .progress import ProgressBar, RichProgressBar, RichProgressBarTheme, TQDMProgressBar
from .stochastic_weight_avg import StochasticWeightAveraging
from .timer import Timer
from .weight_averaging import EMAWeightAveraging, WeightAveraging

__all__ = [
    "Callback",
    "Checkpoint",
    "DeviceStatsMonitor",
    "EMAWeightAveraging",
    "EarlyStopping",
    "LambdaCallback",
    "LearningRateMonitor",
    "ModelCheckpoint",
    "ModelSummary",
    "OnExceptionCheckpoint",
    "ProgressBar",
    "RichModelSummary",
    "RichProgressBar",
    "RichProgressBarTheme",
    "StochasticWeightAveraging",
    "TQDMProgressBar",
    "Timer",
    "WeightAveraging",
]
