"""The callbacks Lightning scripts use most, and the callback protocol they follow."""

from .callback import Callback
from .early_stopping import EarlyStopping
from .model_checkpoint import ModelCheckpoint
from .monitors import DeviceStatsMonitor, LearningRateMonitor

__all__ = ["Callback", "DeviceStatsMonitor", "EarlyStopping", "LearningRateMonitor", "ModelCheckpoint"]
