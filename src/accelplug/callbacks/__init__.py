"""The callbacks Lightning scripts use most, one module per family, and the protocol they follow (:mod:`.base`).

Lightning's ``lightning.pytorch.callbacks`` names. Nothing here imports the Trainer: a callback gets it as
an argument of each hook and uses its public properties, so callbacks sit below ``accelplug.trainer``.

Each name is imported from its module when first used: a Trainer needs three of these modules, and the rest
(pruning loads ``torch.nn.utils.prune``, SWA the optimizers' module...) cost every start-up otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._import_paths import lazy_submodules

if TYPE_CHECKING:
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
    from .progress import TQDMProgressBar
    from .progress_bar import ProgressBar
    from .pruning import ModelPruning
    from .rich_progress import RichProgressBar, RichProgressBarTheme
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

#: Each public name -> the module of this package that defines it.
_DEFINED_IN = {
    "BackboneFinetuning": "finetuning",
    "BaseFinetuning": "finetuning",
    "BasePredictionWriter": "prediction_writer",
    "BatchSizeFinder": "batch_size_finder",
    "Callback": "base",
    "Checkpoint": "base",
    "DeviceStatsMonitor": "monitors",
    "EMAWeightAveraging": "weight_averaging",
    "EarlyStopping": "early_stopping",
    "GradientAccumulationScheduler": "gradient_accumulation_scheduler",
    "LambdaCallback": "lambda_function",
    "LearningRateFinder": "lr_finder",
    "LearningRateMonitor": "monitors",
    "ModelCheckpoint": "model_checkpoint",
    "ModelPruning": "pruning",
    "ModelSummary": "model_summary",
    "OnExceptionCheckpoint": "on_exception_checkpoint",
    "ProgressBar": "progress_bar",
    "RichModelSummary": "model_summary",
    "RichProgressBar": "rich_progress",
    "RichProgressBarTheme": "rich_progress",
    "SpikeDetection": "spike",
    "StochasticWeightAveraging": "stochastic_weight_avg",
    "TQDMProgressBar": "progress",
    "ThroughputMonitor": "throughput_monitor",
    "Timer": "timer",
    "WeightAveraging": "weight_averaging",
}

__getattr__ = lazy_submodules(
    __name__,
    (
        "base",
        "batch_size_finder",
        "early_stopping",
        "finetuning",
        "gradient_accumulation_scheduler",
        "lambda_function",
        "lr_finder",
        "model_checkpoint",
        "model_summary",
        "monitors",
        "on_exception_checkpoint",
        "prediction_writer",
        "progress",
        "progress_bar",
        "pruning",
        "rich_progress",
        "spike",
        "stochastic_weight_avg",
        "throughput_monitor",
        "timer",
        "weight_averaging",
    ),
    _DEFINED_IN,
)
