"""Lightning's accelerator methods on accelplug's accelerators, compared with Lightning's own classes."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator

lightning_accelerators = pytest.importorskip("lightning.pytorch.accelerators")
fabric_accelerators = pytest.importorskip("lightning.fabric.accelerators")


@pytest.mark.parametrize("devices", [1, 2, "3", 5])
def test_cpu_parallel_devices_as_lightning(devices: object) -> None:
    """One CPU device per process, however many processes: the cores do not cap the count."""
    assert CPUAccelerator.get_parallel_devices(devices) == lightning_accelerators.CPUAccelerator.get_parallel_devices(
        devices
    )


@pytest.mark.parametrize("devices", [[], [1], [3, 1]])
def test_cuda_parallel_devices_as_lightning(devices: list[int]) -> None:
    """A list of indices is taken as given, in its order, as Lightning does."""
    ours = CUDAAccelerator.get_parallel_devices(devices)
    assert ours == lightning_accelerators.CUDAAccelerator.get_parallel_devices(devices)
    assert ours == [torch.device("cuda", i) for i in devices]


def test_mps_auto_device_count_is_one_as_lightning() -> None:
    assert MPSAccelerator.auto_device_count() == lightning_accelerators.MPSAccelerator.auto_device_count() == 1


@pytest.mark.parametrize(
    ("ours", "theirs", "wrong", "label"),
    [
        (CPUAccelerator, "CPUAccelerator", "cuda", "CPU"),
        (CUDAAccelerator, "CUDAAccelerator", "cpu", "GPU|CUDA"),
        (MPSAccelerator, "MPSAccelerator", "cpu", "MPS"),
    ],
)
def test_setup_device_refuses_another_device_type(ours: Any, theirs: str, wrong: str, label: str) -> None:
    """Fabric's accelerators raise ValueError, the Trainer's MisconfigurationException: accelplug's one class raises
    its MisconfigurationException, which is a ValueError, so code catching either catches it."""
    with pytest.raises(ValueError, match=f"Device should be ({label})"):
        getattr(fabric_accelerators, theirs)().setup_device(torch.device(wrong))
    with pytest.raises(Exception, match=f"Device should be ({label})"):
        getattr(lightning_accelerators, theirs)().setup_device(torch.device(wrong))
    with pytest.raises(MisconfigurationException, match=f"Device should be ({label}), got {wrong}") as ours_error:
        ours().setup_device(torch.device(wrong))
    assert isinstance(ours_error.value, ValueError)


def test_cpu_devices_above_the_core_count_are_processes_as_in_lightning(monkeypatch: pytest.MonkeyPatch) -> None:
    """``devices=N`` on the CPU starts N processes even with fewer cores, as Lightning's Trainer does."""
    monkeypatch.setattr(CPUAccelerator, "device_count", classmethod(lambda cls: 2))
    trainer = Trainer(accelerator="cpu", devices=5, logger=False, enable_checkpointing=False)
    assert trainer.num_devices == 5
    assert trainer.device_ids == [0, 1, 2, 3, 4]
    assert CPUAccelerator.parse_devices("6") == list(range(6))
    with pytest.raises(MisconfigurationException, match="devices=0"):
        CPUAccelerator.parse_devices(0)


def test_trainer_calls_the_accelerators_setup_hook(tmp_path: Any) -> None:
    """Lightning's ``Accelerator.setup(trainer)``: called with the Trainer at the start of each call."""
    from accelplug.demos import BoringModel

    seen: list[object] = []

    class Recording(CPUAccelerator):
        def setup(self, trainer: Any) -> None:
            seen.append(trainer)

    trainer = Trainer(
        accelerator=Recording(), devices=1, max_steps=1, limit_val_batches=0, logger=False, default_root_dir=tmp_path
    )
    trainer.fit(BoringModel())
    assert seen == [trainer]


@pytest.mark.parametrize("path", ["pytorch", "fabric"])
def test_ddp_fork_aliases_as_lightning(path: str) -> None:
    """The DDP names that fork (``strategy="ddp_notebook"``...), at both of Lightning's paths."""
    import importlib

    ours = importlib.import_module(f"accelplug.{path}.strategies.ddp")._DDP_FORK_ALIASES
    assert ours == importlib.import_module(f"lightning.{path}.strategies.ddp")._DDP_FORK_ALIASES
