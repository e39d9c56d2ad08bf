"""The path of Lightning's batch and loader helpers; they live where the data and the hyper-parameters live.

``move_data_to_device`` in :mod:`accelplug.data.batches`, ``suggested_max_num_workers`` in
:mod:`accelplug.data.workers`, ``is_picklable`` in :mod:`accelplug.core.hparams`; ``apply_to_collection`` is
``lightning_utilities``' own.
"""

from __future__ import annotations

from lightning_utilities.core.apply_func import apply_to_collection

from ..core.hparams import is_picklable
from ..data.batches import move_data_to_device
from ..data.workers import suggested_max_num_workers

__all__ = ["apply_to_collection", "is_picklable", "move_data_to_device", "suggested_max_num_workers"]
