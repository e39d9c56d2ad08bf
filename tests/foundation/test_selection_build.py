"""``selection.build``: one typed record (:class:`~accelplug.selection.RunSetup`) from a run's choices and its
``plugins=``, the one way the Trainer and Fabric turn their arguments into strategy and precision objects."""

from __future__ import annotations

import dataclasses

import pytest

from accelplug import Trainer
from accelplug.checkpoint import TorchCheckpointIO
from accelplug.errors import MisconfigurationException
from accelplug.fabric import Fabric
from accelplug.precision.mixed import BF16MixedPrecision
from accelplug.selection import BothPrecisions, Choices, RunPlugins, RunSetup, build
from accelplug.strategies.single_device import SingleDeviceStrategy


def test_build_returns_a_frozen_record_with_the_objects_made_from_the_selection() -> None:
    setup = build(Choices(accelerator="cpu", devices=1, precision="bf16-mixed"))
    assert isinstance(setup, RunSetup)
    assert (setup.accelerator.name, setup.device_ids, setup.precision_name) == ("cpu", (0,), "bf16-mixed")
    assert setup.strategy.precision_plugin is setup.precision
    assert setup.start_method == "popen" and setup.num_nodes == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.num_nodes = 2  # type: ignore[misc]


def test_a_precision_plugin_chooses_the_precision_and_refuses_a_precision_argument_too() -> None:
    plugin = BF16MixedPrecision("cpu")
    setup = build(Choices(accelerator="cpu", devices=1), RunPlugins(precision=plugin), precision_given=False)
    assert setup.precision is plugin and setup.precision_name == "bf16-mixed"
    with pytest.raises(BothPrecisions, match=r"Received both `precision=32-true` and `plugins="):
        build(Choices(accelerator="cpu", devices=1), RunPlugins(precision=plugin))


def test_the_checkpoint_writer_of_plugins_is_the_strategys_unless_the_strategy_has_its_own() -> None:
    writer = TorchCheckpointIO()
    setup = build(Choices(accelerator="cpu", devices=1), RunPlugins(checkpoint_io=writer))
    assert setup.strategy.checkpoint_io is writer
    own = SingleDeviceStrategy(checkpoint_io=TorchCheckpointIO())
    with pytest.raises(MisconfigurationException, match="both name the checkpoint writer"):
        build(Choices(accelerator="cpu", devices=1, strategy=own), RunPlugins(checkpoint_io=writer))


def test_the_trainer_and_fabric_run_with_what_build_makes_of_the_same_choices() -> None:
    choices = Choices(accelerator="cpu", devices=1, precision="bf16-mixed")
    expected = build(choices)
    trainer = Trainer(accelerator="cpu", devices=1, precision="bf16-mixed", logger=False)
    fabric = Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")
    for strategy, precision, selection in (
        (trainer.strategy, trainer.precision_plugin, trainer.selection),
        (fabric.strategy, fabric.strategy.precision_plugin, fabric._plan.selection),
    ):
        assert selection == dataclasses.replace(expected.selection, accelerator=selection.accelerator)
        assert type(strategy) is type(expected.strategy) and type(precision) is type(expected.precision)
