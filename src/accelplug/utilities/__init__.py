"""``accelplug.utilities``: the helpers Lightning scripts import from ``lightning.pytorch.utilities``.

Imports only: each name lives in the room its meaning gives it, and is one object wherever it is imported
from: ``rank_zero_only`` is :mod:`accelplug.distributed.rank_zero`'s (so ``fabric.launch()`` and the Trainer set
the one rank it reads), ``AttributeDict`` the ``hparams`` class, ``seed_everything`` the one in
``accelplug.seed``. ``apply_to_collection`` and the base of ``LightningEnum`` come from ``lightning_utilities``,
the small package Lightning itself builds on; ``CombinedLoader`` is the one the Trainer combines several
loaders with.
"""

from __future__ import annotations

from lightning_utilities.core.apply_func import apply_to_collection

from .._import_paths import lazy_submodules
from ..core.hparams import AttributeDict, is_picklable
from ..data.batches import move_data_to_device
from ..data.combined_loader import CombinedLoader
from ..data.workers import suggested_max_num_workers
from ..distributed.rank_zero import (
    rank_zero_debug,
    rank_zero_deprecation,
    rank_zero_info,
    rank_zero_only,
    rank_zero_warn,
)
from ..distributed.shared_filesystem import is_shared_filesystem
from ..errors import PossibleUserWarning, disable_possible_user_warnings
from ..measure.flops import measure_flops
from ..measure.grads import grad_norm
from ..seed import seed_everything
from ..strategies.parameter_tying import find_shared_parameters, set_shared_parameters
from ..trainer.options.enums import GradClipAlgorithmType, LightningEnum

__all__ = [
    "AttributeDict",
    "CombinedLoader",
    "GradClipAlgorithmType",
    "LightningEnum",
    "PossibleUserWarning",
    "apply_to_collection",
    "disable_possible_user_warnings",
    "find_shared_parameters",
    "grad_norm",
    "is_picklable",
    "is_shared_filesystem",
    "measure_flops",
    "move_data_to_device",
    "rank_zero_debug",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "seed_everything",
    "set_shared_parameters",
    "suggested_max_num_workers",
]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
