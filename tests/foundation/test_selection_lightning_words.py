"""Selection errors carry Lightning's words (and accelplug's own detail), so code matching Lightning's still matches."""

from __future__ import annotations

import pytest

from accelplug import MisconfigurationException, Trainer
from accelplug.environments.lightning import LightningEnvironment
from accelplug.environments.slurm import SLURMEnvironment

lightning = pytest.importorskip("lightning.pytorch")


def test_invalid_accelerator_name() -> None:
    expected = "You selected an invalid accelerator name: `accelerator='invalid'`"
    with pytest.raises(ValueError, match=expected):
        lightning.Trainer(accelerator="invalid")
    with pytest.raises(MisconfigurationException, match=expected) as caught:
        Trainer(accelerator="invalid")
    assert "Did you mean" in str(caught.value) or "Registered:" in str(caught.value)


def test_unavailable_accelerator_names_its_class() -> None:
    expected = "`MPSAccelerator` can not run on your system since the accelerator is not available."
    with pytest.raises(Exception, match=expected):
        lightning.Trainer(accelerator="mps")
    with pytest.raises(MisconfigurationException, match=expected) as caught:
        Trainer(accelerator="mps")
    assert str(caught.value).startswith("accelerator='mps' cannot be used on this machine: MPS needs macOS")


@pytest.mark.parametrize("precision", [1, 12, "invalid"])
def test_invalid_precision(precision: object) -> None:
    expected = f"Precision {precision!r} is invalid"
    with pytest.raises(ValueError, match=expected):
        lightning.Trainer(precision=precision)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match=expected):
        Trainer(precision=precision)  # type: ignore[arg-type]


def test_two_plugins_of_one_kind() -> None:
    expected = "Received multiple values for ClusterEnvironment flags in `plugins`"
    from lightning.fabric.plugins import environments

    with pytest.raises(Exception, match=expected):  # Lightning's MisconfigurationException
        lightning.Trainer(plugins=[environments.LightningEnvironment(), environments.SLURMEnvironment()])
    with pytest.raises(MisconfigurationException, match=expected):
        Trainer(plugins=[LightningEnvironment(), SLURMEnvironment()])


@pytest.mark.parametrize("devices", [["0"], [0, "1"], ["GPU"], [["0", "1"], [0, 1]], [False], 1.5])
def test_devices_of_a_wrong_type_is_a_type_error(devices: object) -> None:
    """Lightning raises TypeError for these; accelplug's error is that and a MisconfigurationException naming them."""
    expected = "must be an int, a string, a sequence of ints, but you"  # Lightning's words where GPUs are asked for
    with pytest.raises(TypeError):
        lightning.Trainer(accelerator="cpu", devices=devices)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match=expected) as caught:
        Trainer(accelerator="cpu", devices=devices)  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError)
    assert str(caught.value).startswith(f"devices={devices!r} has type")
