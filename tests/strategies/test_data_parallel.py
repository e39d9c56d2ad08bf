"""Lightning Fabric's ``DataParallelStrategy``: its import paths work; building one is refused, naming DDP."""

from __future__ import annotations

import pytest

from accelplug.errors import MisconfigurationException
from accelplug.strategies.parallel import ParallelStrategy


def test_the_class_imports_from_lightning_fabrics_paths() -> None:
    from accelplug.fabric.strategies import DataParallelStrategy
    from accelplug.fabric.strategies.dp import DataParallelStrategy as from_module

    assert DataParallelStrategy is from_module
    assert issubclass(DataParallelStrategy, ParallelStrategy)


def test_building_one_is_refused_naming_ddp() -> None:
    from accelplug.fabric.strategies import DataParallelStrategy

    with pytest.raises(MisconfigurationException, match="strategy='ddp'"):
        DataParallelStrategy()
