"""The callbacks Lightning scripts use most, one module per family, and the protocol they follow (:mod:`.base`).

Lightning's ``lightning.pytorch.callbacks`` names. Nothing here imports the Trainer: a callback gets it as
an argument of each hook and uses its public properties, so callbacks sit below ``accelplug.trainer``.
"""

from .base import Callback, Checkpoint
from .batch_size_finder import BatchSizeFinder
from .early_stopping import EarlyStopping
from .finetuning import BackboneFinetuning, BaseFinetuning
from .gradient_accumulation_scheduler import GradientAccumulationScheduler
from .lambda_function import LambdaCallback
from .lr_finder import LearningRateFinder
from .model_checkpoint import ModelCheckpoint
from .model_summary import ModelSummary, RichModelSummary
from .monitors import DeviceStatsMonitor, LearningRateMonitor
from .on_exception_checkpoint import OnExceptionCheckpoint
from .prediction_writer import BasePredictionWriter
from .progress import ProgressBar, RichProgressBar, RichProgressBarTheme, TQDMProgressBar
from .pruning import ModelPruning
from .spike import SpikeDetection
from .stochastic_weight_avg import StochasticWeightAveraging
from .throughput_monitor import ThroughputMonitor
from .timer import Timer
from .weight_averaging import EMAWeightAveraging, WeightAveraging

__all__ = [
    "BackboneFinetuning",
    "BaseFinetuning",
    "BasePredictionWriter",
    "BatchSizeFinder",
    "Callback",
    "Checkpoint",
    "DeviceStatsMonitor",
    "EMAWeightAveraging",
    "EarlyStopping",
    "GradientAccumulationScheduler",
    "LambdaCallback",
    "LearningRateFinder",
    "LearningRateMonitor",
    "ModelCheckpoint",
    "ModelPruning",
    "ModelSummary",
    "OnExceptionCheckpoint",
    "ProgressBar",
    "RichModelSummary",
    "RichProgressBar",
    "RichProgressBarTheme",
    "SpikeDetection",
    "StochasticWeightAveraging",
    "TQDMProgressBar",
    "ThroughputMonitor",
    "Timer",
    "WeightAveraging",
]
