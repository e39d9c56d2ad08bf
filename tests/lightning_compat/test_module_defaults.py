"""The last LightningModule/DataModule names of Lightning 2.6, the same code under Lightning 2.6.6 and accelplug.

The base's ``training_step``, ``validation_step``... and ``*_dataloader`` defaults behave as Lightning's (a warning,
None, Lightning's error) while a module that does not write them still skips the stage they belong to;
``remove_ignored_hparams``, ``configure_sharded_model`` (deprecated), ``device_mesh``, ``fabric``,
``all_gather`` on one process and ``to_tensorrt`` without its package. ``all_gather`` on two processes is in
``tests/strategies/test_model_parallel.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _loader(n: int = 16, seed: int = 0) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _trainer(framework: Any, **options: Any) -> Any:
    quiet = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    return framework.Trainer(accelerator="cpu", enable_model_summary=False, **quiet, **options)


def _regression(framework: Any) -> type:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, lr: float = 0.1, width: int = 3) -> None:
            super().__init__()
            self.save_hyperparameters()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)
            self.calls: list[str] = []

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_validation_epoch_start(self) -> None:
            self.calls.append("validation")

    return Regression


# ---- the defaults of the step and loader methods ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"])
def test_an_unwritten_loader_method_raises_lightnings_error(name: str) -> None:
    messages = []
    for framework in FRAMEWORKS.values():
        module = _regression(framework)()
        with pytest.raises(Exception, match=f"`{name}` must be implemented") as raised:
            getattr(module, name)()
        messages.append((type(raised.value).__name__, str(raised.value)))
        assert framework is lightning or isinstance(raised.value, MisconfigurationException)
    assert messages[0] == messages[1]


def test_the_base_training_step_warns_as_lightnings_and_the_evaluation_steps_return_none() -> None:
    for framework in FRAMEWORKS.values():
        module = framework.LightningModule()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert module.training_step(None, 0) is None
        assert [str(w.message) for w in caught] == [
            "`training_step` must be implemented to be used with the Lightning Trainer"
        ]
        assert module.validation_step(None, 0) is None
        assert module.test_step(None, 0) is None


def test_a_module_calling_super_step_methods_works_in_both() -> None:
    """A subclass may delegate to the base's defaults, which exist in both frameworks."""
    calls = {}
    for name, framework in FRAMEWORKS.items():
        regression = _regression(framework)

        class Delegating(regression):  # type: ignore[misc, valid-type]
            def validation_step(self, batch: Any, batch_idx: int) -> Any:
                self.calls.append("step")
                return super().validation_step(batch, batch_idx)

        module = Delegating()
        _trainer(framework, max_epochs=1).fit(module, _loader(), _loader(8, 1))
        calls[name] = module.calls
    assert calls["accelplug"] == calls["lightning"] == ["validation", "step", "step"] * 2  # sanity check, epoch


def test_without_its_own_validation_step_a_module_skips_validation_in_both() -> None:
    for framework in FRAMEWORKS.values():
        module = _regression(framework)()
        trainer = _trainer(framework, max_epochs=2)
        trainer.fit(module, _loader(), _loader(8, 1))
        assert module.calls == [], framework.__name__
        assert trainer.global_step == 8


def test_a_module_without_training_step_is_refused_clearly() -> None:
    class NoStep(accelplug.LightningModule):
        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    with pytest.raises(
        MisconfigurationException, match=r"No `training_step\(\)` method defined.*NoStep has no training_step\(\)"
    ):
        _trainer(accelplug, max_epochs=1).fit(NoStep(), _loader())


@pytest.mark.parametrize("method", ["validate", "test"])
def test_validate_and_test_refuse_a_module_without_their_step(method: str) -> None:
    module = _regression(accelplug)()
    with pytest.raises(MisconfigurationException, match=r"_step\(\)` method defined to run `Trainer\.(validate|test)`"):
        getattr(_trainer(accelplug), method)(module, _loader())
    with pytest.raises(Exception, match=r"_step\(\)` method defined"):
        getattr(_trainer(lightning), method)(_regression(lightning)(), _loader())


def test_a_plain_torch_module_still_fits() -> None:
    class Plain(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = _trainer(accelplug, max_epochs=1)
    trainer.fit(Plain(), _loader())
    assert trainer.global_step == 4


# ---- hyper-parameters ---------------------------------------------------------------------------------------------
def test_remove_ignored_hparams_drops_what_a_base_saved_as_lightnings() -> None:
    seen = []
    for framework in FRAMEWORKS.values():
        regression = _regression(framework)

        class Child(regression):  # type: ignore[misc, valid-type]
            def __init__(self, lr: float = 0.2, width: int = 5) -> None:
                super().__init__(lr, width)
                self.remove_ignored_hparams(["width", "absent"])

        class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
            def __init__(self, batch_size: int = 8, root: str = "/data") -> None:
                super().__init__()
                self.save_hyperparameters()
                self.remove_ignored_hparams(["root"])

        module, data = Child(), Data()
        seen.append((dict(module.hparams), dict(module.hparams_initial), dict(data.hparams)))
    assert seen[0] == seen[1]
    assert seen[1][0] == {"lr": 0.2}


def test_remove_ignored_hparams_refuses_a_single_string() -> None:
    module = _regression(accelplug)()
    with pytest.raises(MisconfigurationException, match=r"ignore_list='lr'.*list of hyper-parameter names"):
        module.remove_ignored_hparams("lr")  # type: ignore[arg-type]


# ---- configure_sharded_model (deprecated) ---------------------------------------------------------------------------
def test_configure_sharded_model_is_called_with_a_deprecation_as_lightnings() -> None:
    for framework in FRAMEWORKS.values():
        regression = _regression(framework)

        class Old(regression):  # type: ignore[misc, valid-type]
            def configure_sharded_model(self) -> None:
                self.calls.append("configure_sharded_model")
                self.head = torch.nn.Linear(1, 1)

        module = Old()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _trainer(framework, max_epochs=1).fit(module, _loader())
        assert module.calls == ["configure_sharded_model"], framework.__name__
        assert any("configure_sharded_model` which is deprecated" in str(w.message) for w in caught)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught if "deprecated" in str(w.message))


def test_writing_both_configure_hooks_is_refused_as_lightnings() -> None:
    for framework in FRAMEWORKS.values():
        regression = _regression(framework)

        class Both(regression):  # type: ignore[misc, valid-type]
            def configure_sharded_model(self) -> None: ...

            def configure_model(self) -> None: ...

        with pytest.raises(RuntimeError, match=r"Both `Both\.configure_model`, and `Both\.configure_sharded_model`"):
            _trainer(framework, max_epochs=1).fit(Both(), _loader())


# ---- device_mesh, fabric, all_gather on one process, to_tensorrt ----------------------------------------------------
def test_device_mesh_is_none_outside_model_parallel_and_fabric_is_none_outside_fabric() -> None:
    for framework in FRAMEWORKS.values():
        module = _regression(framework)()
        assert module.device_mesh is None
        assert module.fabric is None


def test_fabric_setup_attaches_the_module_which_then_logs_through_fabric() -> None:
    import lightning.fabric.loggers

    import accelplug.fabric.loggers

    bases = {"lightning": lightning.fabric.loggers.Logger, "accelplug": accelplug.fabric.loggers.Logger}
    got = {}
    for name, framework in FRAMEWORKS.items():
        logged: list[dict[str, Any]] = []

        class Sink(bases[name]):  # type: ignore[misc, valid-type]
            def __init__(self, into: list[dict[str, Any]]) -> None:
                super().__init__()
                self.into = into

            @property
            def name(self) -> str:
                return "sink"

            @property
            def version(self) -> int:
                return 0

            def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
                self.into.append(dict(metrics))

            def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None: ...

        fabric = framework.Fabric(accelerator="cpu", devices=1, loggers=Sink(logged))
        module = _regression(framework)()
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        _, opt = fabric.setup(module, optimizer)
        assert module.fabric is not None
        assert module.optimizers() is opt
        module.log("loss", torch.tensor(2.0))
        module.log_dict({"a": 1.0, "b": torch.tensor(3.0)})
        module.log("hidden", 1.0, logger=False)
        got[name] = [{k: float(v) for k, v in m.items()} for m in logged]
    assert got["accelplug"] == got["lightning"] == [{"loss": 2.0}, {"a": 1.0, "b": 3.0}]


def test_all_gather_on_one_process_adds_no_dimension_as_lightnings() -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():
        regression = _regression(framework)

        class Gathering(regression):  # type: ignore[misc, valid-type]
            def on_train_end(self) -> None:
                self.gathered = self.all_gather({"t": torch.arange(3.0), "n": 2, "pair": (1.5, torch.ones(2))})

        module = Gathering()
        _trainer(framework, max_epochs=1).fit(module, _loader())
        results[name] = module.gathered
    ours, theirs = results["accelplug"], results["lightning"]
    assert ours.keys() == theirs.keys()
    torch.testing.assert_close(ours["t"], theirs["t"])
    torch.testing.assert_close(ours["n"], theirs["n"])  # an int becomes int32 in both
    torch.testing.assert_close(ours["pair"][0], theirs["pair"][0])
    assert type(ours["pair"]) is type(theirs["pair"])


def test_to_tensorrt_without_torch_tensorrt_names_the_package() -> None:
    import importlib.util

    if importlib.util.find_spec("torch_tensorrt") is not None:
        pytest.skip("torch_tensorrt is installed here, so there is no missing-package error to see")
    module = _regression(accelplug)()
    with pytest.raises(MisconfigurationException, match="requires `torch_tensorrt` to be installed") as raised:
        module.to_tensorrt(input_sample=torch.zeros(1, 2))
    assert isinstance(raised.value, ModuleNotFoundError)  # what Lightning raises, so either except catches it
    with pytest.raises(ModuleNotFoundError, match="torch_tensorrt"):
        _regression(lightning)().to_tensorrt(input_sample=torch.zeros(1, 2))


def test_to_tensorrt_refuses_an_unknown_ir_with_a_close_match() -> None:
    with pytest.raises(MisconfigurationException, match=r"ir='dynamos'.*'default', 'dynamo', 'ts'.*dynamo"):
        _regression(accelplug)().to_tensorrt(ir="dynamos")  # type: ignore[arg-type]


def test_fabric_sharded_model_is_deprecated_and_builds_the_module_as_lightnings() -> None:
    for framework in FRAMEWORKS.values():
        fabric = framework.Fabric(accelerator="cpu", devices=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with fabric.sharded_model():
                layer = torch.nn.Linear(2, 2)
        assert layer.weight.device.type == "cpu"
        expected = "`Fabric.sharded_model()` is deprecated in favor of `Fabric.init_module()`"
        assert any(expected in str(w.message) for w in caught), framework.__name__
