"""Selection rules shared by the Trainer and ``accelplug launch``."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from tests.fakes import FakeAccelerator

from accelplug import MisconfigurationException, Trainer, get_registry, select
from accelplug.accelerators import CPUAccelerator
from accelplug.errors import AcceleratorUnavailableError


class _TwoDevices(FakeAccelerator):
    name = "twodev"
    auto_priority = 10
    count = 4
    strategies = ("single_device", "ddp")


class _OnlySingle(_TwoDevices):
    name = "onlysingle"
    strategies = ("single_device",)


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        ("auto", [0, 1, 2, 3]),
        (2, [0, 1]),
        (-1, [0, 1, 2, 3]),
        ("-1", [0, 1, 2, 3]),
        ([0, 2], [0, 2]),
        ((3, 1), [3, 1]),
        ("2", [0, 1]),
        ("0,2", [0, 2]),
        (" 1, 3 ", [1, 3]),
        ("0,", [0]),
    ],
)
def test_every_devices_form_of_the_contract(devices: object, expected: list[int]) -> None:
    assert _TwoDevices.parse_devices(devices) == expected


def test_auto_picks_the_cpu_here() -> None:
    selection = select()
    assert selection.accelerator.name == "cpu"
    assert selection.strategy == "single_device"
    assert selection.root_device == torch.device("cpu")
    assert "best available" in selection.reason


def test_auto_picks_the_highest_priority_available_accelerator() -> None:
    get_registry().register(_TwoDevices)
    assert select().accelerator.name == "twodev"


def test_accelplug_accelerator_env_forces_the_cpu_under_auto(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    get_registry().register(_TwoDevices)
    monkeypatch.setenv("ACCELPLUG_ACCELERATOR", "cpu")
    selection = select()
    assert selection.accelerator.name == "cpu"
    assert "ACCELPLUG_ACCELERATOR='cpu'" in selection.reason


def test_an_explicit_name_wins_over_the_env_var(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    get_registry().register(_TwoDevices)
    monkeypatch.setenv("ACCELPLUG_ACCELERATOR", "cpu")
    assert select("twodev").accelerator.name == "twodev"


def test_a_bad_env_var_names_the_variable(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ACCELPLUG_ACCELERATOR", "cpux")
    with pytest.raises(MisconfigurationException, match=r"ACCELPLUG_ACCELERATOR='cpux'.*Did you mean 'cpu'"):
        select()


def test_gpu_without_a_gpu_raises_with_each_gpu_reason() -> None:
    with pytest.raises(AcceleratorUnavailableError) as info:
        select("gpu")
    assert info.value.accelerator == "gpu"
    assert "cuda:" in info.value.reason and "mps:" in info.value.reason


def test_gpu_counts_only_accelerators_marked_is_gpu() -> None:
    get_registry().register(_TwoDevices)  # available but is_gpu is False
    with pytest.raises(AcceleratorUnavailableError):
        select("gpu")


def test_an_accelerator_instance_is_used_as_given() -> None:
    accelerator = CPUAccelerator()
    assert select(accelerator).accelerator is accelerator


def test_an_accelerator_class_is_instantiated_and_registered() -> None:
    selection = select(_TwoDevices, devices=2)
    assert isinstance(selection.accelerator, _TwoDevices)
    assert get_registry().get("twodev") is _TwoDevices


def test_auto_devices_on_a_single_device_accelerator_with_several_devices_means_one() -> None:
    # Issue 11 reversed this: it was refused ("supports only 'single_device'"), so a default
    # Trainer() failed on such an accelerator. devices="auto" now means one device, as for MPS.
    selection = select(_OnlySingle)
    assert selection.device_ids == (0,)
    assert selection.strategy == "single_device"


def test_several_devices_asked_explicitly_on_a_single_device_accelerator_are_still_refused() -> None:
    with pytest.raises(MisconfigurationException, match="supports only 'single_device'"):
        select(_OnlySingle, devices=2)


def test_a_default_trainer_runs_on_a_single_device_accelerator_with_several_devices() -> None:
    get_registry().register(_OnlySingle)
    trainer = Trainer()
    assert (trainer.accelerator.name, trainer.num_devices, trainer.strategy.name) == ("onlysingle", 1, "single_device")


def test_auto_strategy_is_ddp_for_several_devices() -> None:
    assert select(_TwoDevices, devices=2).strategy == "ddp"


def test_single_device_with_several_devices_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="uses one device, but 2 devices were selected"):
        select(_TwoDevices, devices=2, strategy="single_device")


def test_a_strategy_the_accelerator_lacks_is_refused_with_why() -> None:
    with pytest.raises(MisconfigurationException, match="supports only 'single_device'"):
        select(_OnlySingle, devices=1, strategy="ddp")


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        (32, "32-true"),
        ("32", "32-true"),
        (16, "16-mixed"),
        ("bf16", "bf16-mixed"),
        (64, "64-true"),
        ("BF16-Mixed", "bf16-mixed"),
    ],
)
def test_precision_aliases_resolve_to_canonical_names(given: object, canonical: str) -> None:
    assert select("cpu", precision=given).precision == canonical  # type: ignore[arg-type]


def test_a_precision_the_accelerator_cannot_do_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="precision='bf16-mixed' cannot run on 'onlysingle'"):
        select(_OnlySingle, devices=1, precision="bf16-mixed")


def test_the_selection_is_immutable() -> None:
    selection = select()
    with pytest.raises(dataclasses.FrozenInstanceError):
        selection.strategy = "ddp"  # type: ignore[misc]


def test_under_torchrun_auto_devices_means_one_per_local_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    selection = select(_TwoDevices)
    assert selection.device_ids == (0, 1)
    assert selection.strategy == "ddp"


def test_under_torchrun_a_mismatched_device_count_is_explained(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    with pytest.raises(MisconfigurationException, match="launched with 2 processes per node"):
        select(_TwoDevices, devices=3)


def test_trainer_exposes_the_selection() -> None:
    trainer = Trainer(accelerator="cpu", devices=1)
    assert trainer.accelerator.name == "cpu"
    assert trainer.strategy.name == "single_device"
    assert trainer.num_devices == 1
    assert trainer.device_ids == [0]
    assert trainer.root_device == torch.device("cpu")


def test_trainer_auto_leaves_cuda_uninitialised(run_python) -> None:  # type: ignore[no-untyped-def]
    result = run_python(
        "import torch\nfrom accelplug import Trainer\nTrainer(accelerator='auto')\nprint(torch.cuda.is_initialized())"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# ---- strategy objects (Lightning's habit: strategy=FSDPStrategy(...)) ------------------------------------
def test_a_strategy_object_is_checked_like_its_name_and_kept() -> None:
    from accelplug.strategies import FSDPStrategy

    chosen = FSDPStrategy(state_dict_type="sharded")
    selection = select(CPUAccelerator, devices=1, strategy=chosen)
    assert selection.strategy == "fsdp"
    assert selection.strategy_object is chosen
    assert select(CPUAccelerator, devices=1, strategy="fsdp").strategy_object is None


def test_a_strategy_object_the_accelerator_refuses_is_explained() -> None:
    from accelplug.strategies import DDPStrategy

    with pytest.raises(MisconfigurationException, match=r"strategy=DDPStrategy\(\) cannot run on 'onlysingle'"):
        select(_OnlySingle, devices=1, strategy=DDPStrategy())


def test_a_strategy_class_instead_of_an_object_names_the_accepted_forms() -> None:
    from accelplug.strategies import FSDPStrategy

    with pytest.raises(
        MisconfigurationException,
        match=r"strategy=<class .*FSDPStrategy'> is a class; pass an instance: strategy=FSDPStrategy\(...\)",
    ):
        select(CPUAccelerator, devices=1, strategy=FSDPStrategy)  # type: ignore[arg-type]


def test_shape_errors_of_several_arguments_come_in_one_message() -> None:
    with pytest.raises(MisconfigurationException) as info:
        select(3, devices=1.5, strategy=None, precision=True)  # type: ignore[arg-type]
    message = str(info.value)
    for part in ("accelerator=3 has type int", "devices=1.5 has type float", "strategy=None", "precision=True"):
        assert part in message
    assert message.count("; ") == 3


def test_a_strategy_typo_suggests_fsdp() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'fsdp'"):
        select(CPUAccelerator, devices=1, strategy="fsdpp")
