"""``lightning.fabric.utilities``'s path (imports only)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...core.hparams import AttributeDict
from ...data.batches import move_data_to_device
from ...data.workers import suggested_max_num_workers
from ...distributed.rank_zero import rank_zero_deprecation, rank_zero_info, rank_zero_only, rank_zero_warn
from ...distributed.shared_filesystem import is_shared_filesystem
from ...enums import LightningEnum
from ...errors import disable_possible_user_warnings
from ...fabric.throughput import FabricThroughputMonitor as ThroughputMonitor
from ...measure.flops import measure_flops
from ...measure.throughput import Throughput
from ...seed import seed_everything

__all__ = [
    "AttributeDict",
    "LightningEnum",
    "Throughput",
    "ThroughputMonitor",
    "disable_possible_user_warnings",
    "is_shared_filesystem",
    "measure_flops",
    "move_data_to_device",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "seed_everything",
    "suggested_max_num_workers",
]

__getattr__ = lazy_submodules(
    __name__,
    (
        "apply_func",
        "cloud_io",
        "data",
        "distributed",
        "enums",
        "exceptions",
        "rank_zero",
        "seed",
        "spike",
        "throughput",
        "types",
        "warnings",
    ),
)
