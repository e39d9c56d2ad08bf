"""The methods a backend overrides to change how a run uses its device, each seen doing its job.

``Strategy.process_dataloader`` (how batches reach the device), ``Strategy.optimizer_step`` (what
happens around every optimizer step), ``Accelerator.get_rng_state``/``set_rng_state`` (a device's own
random generator in checkpoints and resumes) and ``strategy="auto"`` choosing an accelerator's own
single-device strategy. The backend here is the CPU under another name, with a generator of its own
that its module draws from, so every effect can be observed exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch

from accelplug import Accelerator, LightningModule, Trainer, get_registry
from accelplug.precision.base import NumericPrecision
from accelplug.strategies.base import Strategy
from tests.modules import LinearRegression, quiet, regression_data


class _Counter:
    """A device generator stand-in: an integer state, advanced by every draw."""

    def __init__(self) -> None:
        self.state = 7

    def draw(self) -> float:
        self.state = (self.state * 1103515245 + 12345) % 2**31
        return self.state / 2**31


GENERATOR = _Counter()


class _OwnDeviceAccelerator(Accelerator):
    name = "owndevice"
    device_type = "cpu"
    auto_priority = -5

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("own_single", "single_device")

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu")

    def get_rng_state(self) -> Any:
        return GENERATOR.state

    def set_rng_state(self, state: Any) -> None:
        GENERATOR.state = int(state)


class _Feed:
    """A loader wrapper that counts the batches it handed out."""

    def __init__(self, loader: Any, log: list[str]) -> None:
        self.loader = loader
        self.log = log

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            self.log.append("batch")
            yield batch


class _OwnSingleStrategy(Strategy):
    name = "own_single"
    calls: ClassVar[list[str]] = []

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return accelerator.name == "owndevice"

    def process_dataloader(self, loader: Any) -> Any:
        type(self).calls.append("process_dataloader")
        return _Feed(loader, type(self).calls)

    def optimizer_step(
        self, optimizer: torch.optim.Optimizer, closure: Callable[[], Any] | None, precision: NumericPrecision
    ) -> Any:
        value = super().optimizer_step(optimizer, closure, precision)
        type(self).calls.append("optimizer_step")
        return value


class _DistributedFirst(_OwnDeviceAccelerator):
    name = "ddpfirst"

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("ddp", "single_device")


@pytest.fixture(autouse=True)
def _registered() -> None:
    registry = get_registry()
    registry.register(_OwnDeviceAccelerator)
    registry.register(_DistributedFirst)
    registry.register_strategy(_OwnSingleStrategy)
    _OwnSingleStrategy.calls.clear()


def _trainer(**options: Any) -> Trainer:
    settings = {**quiet(logger=False, enable_checkpointing=False, num_sanity_val_steps=0), **options}
    settings["accelerator"] = options.get("accelerator", "owndevice")
    return Trainer(**settings)


# ---- strategy="auto" ---------------------------------------------------------------------------------
def test_auto_on_one_device_uses_the_accelerators_own_single_device_strategy() -> None:
    assert _trainer().strategy.name == "own_single"


def test_auto_on_one_device_keeps_single_device_when_the_first_strategy_is_distributed() -> None:
    assert _trainer(accelerator="ddpfirst").strategy.name == "single_device"


def test_auto_on_the_cpu_is_still_single_device() -> None:
    assert _trainer(accelerator="cpu").strategy.name == "single_device"


def test_an_accelerators_own_strategy_can_still_be_bypassed_by_name() -> None:
    assert _trainer(strategy="single_device").strategy.name == "single_device"


# ---- process_dataloader ------------------------------------------------------------------------------
class _Tested(LinearRegression):
    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        return self.validation_step(batch, batch_idx)


def test_every_stage_iterates_the_loader_the_strategy_returned() -> None:
    model, calls = _Tested(), _OwnSingleStrategy.calls
    trainer = _trainer(max_epochs=1, limit_val_batches=2)
    trainer.fit(model, regression_data(n=64, batch_size=16), regression_data(n=64, batch_size=16, shuffle=False))
    assert calls.count("process_dataloader") == 2
    assert calls.count("batch") == 4 + 2, "4 training batches and 2 validation batches went through the wrapper"
    calls.clear()
    trainer.validate(model, regression_data(n=32, batch_size=16, shuffle=False), verbose=False)
    trainer.test(model, regression_data(n=32, batch_size=16, shuffle=False), verbose=False)
    predictions = trainer.predict(model, regression_data(n=48, batch_size=16, shuffle=False))
    assert calls.count("process_dataloader") == 3
    assert calls.count("batch") == 2 + 2 + 3
    assert len(predictions) == 3


# ---- backward -----------------------------------------------------------------------------------------
class _OwnBackward(Strategy):
    """A strategy whose engine owns backward (DeepSpeed's does): it doubles the loss before backward."""

    name = "own_backward"
    losses: ClassVar[list[float]] = []

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return accelerator.name == "cpu"

    def backward(self, loss: torch.Tensor, precision: NumericPrecision) -> None:
        type(self).losses.append(float(loss.detach()))
        precision.backward(loss * 2)


def test_backward_goes_through_the_strategy_and_keeps_the_loop_off_its_lean_path() -> None:
    def trained(strategy: str, lr: float) -> torch.Tensor:
        torch.manual_seed(0)
        model = LinearRegression(lr=lr)
        _trainer(accelerator="cpu", strategy=strategy, max_epochs=1).fit(model, regression_data(n=64, batch_size=16))
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    get_registry().register_strategy(_OwnBackward)
    _OwnBackward.losses.clear()
    assert _OwnBackward().customizes_optimizer_step
    doubled = trained("own_backward", lr=0.05)
    assert len(_OwnBackward.losses) == 4, "every batch's backward went through the strategy"
    # SGD on twice the gradient is SGD on the gradient with twice the learning rate
    torch.testing.assert_close(doubled, trained("single_device", lr=0.1))


# ---- optimizer_step ----------------------------------------------------------------------------------
def test_every_optimizer_step_goes_through_the_strategy_even_for_a_module_the_lean_path_would_take() -> None:
    model = LinearRegression()
    trainer = _trainer(max_epochs=2)
    trainer.fit(model, regression_data(n=64, batch_size=16))
    assert trainer.global_step == 8
    assert _OwnSingleStrategy.calls.count("optimizer_step") == 8


def test_the_strategys_optimizer_step_trains_like_the_plain_one() -> None:
    def trained(**options: Any) -> torch.Tensor:
        torch.manual_seed(0)
        model = LinearRegression()
        _trainer(max_epochs=2, **options).fit(model, regression_data(n=64, batch_size=16))
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    assert torch.equal(trained(), trained(strategy="single_device"))


class _Manual(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False
        self.linear = torch.nn.Linear(3, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        optimizer = self.optimizers()
        optimizer.zero_grad()
        x, y = batch
        self.manual_backward(torch.nn.functional.mse_loss(self.linear(x), y))
        optimizer.step()

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_manual_optimization_steps_go_through_the_strategy() -> None:
    trainer = _trainer(max_epochs=1)
    trainer.fit(_Manual(), regression_data(n=64, batch_size=16))
    assert trainer.global_step == 4
    assert _OwnSingleStrategy.calls.count("optimizer_step") == 4


# ---- the device's own random generator ------------------------------------------------------------
class _DrawsOnDevice(LinearRegression):
    """Scales each loss by a draw from the device generator: the weights depend on every draw."""

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return super().training_step(batch, batch_idx) * (0.5 + GENERATOR.draw())


def _weights(model: torch.nn.Module) -> list[float]:
    return [v for p in model.parameters() for v in p.detach().flatten().tolist()]


def test_a_checkpoint_holds_the_device_generator_and_a_resume_continues_its_sequence(tmp_path: Path) -> None:
    GENERATOR.state = 7
    torch.manual_seed(0)
    straight = _DrawsOnDevice()
    _trainer(max_epochs=2).fit(straight, regression_data(n=64, batch_size=16))
    drawn_straight = GENERATOR.state

    GENERATOR.state = 7
    torch.manual_seed(0)
    first = _DrawsOnDevice()
    trainer = _trainer(max_epochs=1)
    trainer.fit(first, regression_data(n=64, batch_size=16))
    path = trainer.save_checkpoint(tmp_path / "one.ckpt")
    saved = torch.load(path, weights_only=True)["rng"]["device"]
    assert saved == {"accelerator": "owndevice", "state": GENERATOR.state}

    GENERATOR.state = 12345  # whatever the generator holds, the resume puts the saved state back
    resumed = _DrawsOnDevice()
    _trainer(max_epochs=2).fit(resumed, regression_data(n=64, batch_size=16), ckpt_path=path)
    assert GENERATOR.state == drawn_straight
    assert _weights(resumed) == _weights(straight)


def test_a_device_generator_state_is_not_applied_on_another_accelerator(tmp_path: Path) -> None:
    GENERATOR.state = 7
    trainer = _trainer(max_epochs=1)
    trainer.fit(_DrawsOnDevice(), regression_data(n=64, batch_size=16))
    path = trainer.save_checkpoint(tmp_path / "one.ckpt")
    GENERATOR.state = 99
    _trainer(accelerator="cpu", max_epochs=2).fit(
        LinearRegression(), regression_data(n=64, batch_size=16), ckpt_path=path
    )
    assert GENERATOR.state == 99


# ---- where checkpoints load ---------------------------------------------------------------------------
class _IndexedDevice(_OwnDeviceAccelerator):
    """Devices named ``cpu:0``: torch.load cannot map storages there, so checkpoints must load elsewhere."""

    name = "indexeddevice"

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("loads_on_cpu",)

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu", index)


class _LoadsOnCPU(Strategy):
    name = "loads_on_cpu"

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return accelerator.name == "indexeddevice"

    def checkpoint_map_location(self) -> torch.device:
        return torch.device("cpu")


def test_ckpt_path_last_verifies_candidates_where_the_strategy_loads_checkpoints(tmp_path: Path) -> None:
    get_registry().register(_IndexedDevice)
    get_registry().register_strategy(_LoadsOnCPU)
    options = {"accelerator": "indexeddevice", "enable_checkpointing": True, "default_root_dir": tmp_path}
    _trainer(max_epochs=1, **options).fit(LinearRegression(), regression_data(n=64, batch_size=16))
    resumed = _trainer(max_epochs=2, **options)
    # the resumed fit writes beside the first one's files: warned, as Lightning warns
    with pytest.warns(UserWarning, match=r"Checkpoint directory .*checkpoints exists and is not empty"):
        resumed.fit(LinearRegression(), regression_data(n=64, batch_size=16), ckpt_path="auto")
    assert resumed.global_step == 8
