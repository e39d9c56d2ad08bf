"""LightningModule and LightningDataModule names issue 19 added (``load_from_checkpoint``, ``freeze``,
``example_input_array``, ``to_torchscript``, ``to_onnx``, ``strict_loading``, ``from_datasets``...): the same code
under Lightning 2.6.6 and accelplug, results compared; checkpoints written by either load in the other."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _classes(framework: Any) -> tuple[Any, Any]:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, hidden: int = 4, lr: float = 0.1, tag: str = "a") -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(2, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))
            self.example_input_array = torch.zeros(3, 2)

        def forward(self, x: torch.Tensor) -> Any:
            return self.net(x)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def __init__(self, batch_size: int = 8, n: int = 32) -> None:
            super().__init__()
            self.save_hyperparameters()

        def train_dataloader(self) -> DataLoader[Any]:
            x = torch.randn(self.hparams.n, 2, generator=torch.Generator().manual_seed(0))
            return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=self.hparams.batch_size)

    return Regression, Data


def _fit_and_save(framework: Any, root: Path, hidden: int) -> Path:
    module_class, data_class = _classes(framework)
    torch.manual_seed(0)
    model = module_class(hidden=hidden, lr=0.05, tag="saved")
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
    )
    trainer.fit(model, datamodule=data_class(batch_size=16))
    path = root / "model.ckpt"
    trainer.save_checkpoint(path)
    return path


@pytest.mark.parametrize(
    ("writer", "reader"),
    [("lightning", "lightning"), ("lightning", "accelplug"), ("accelplug", "accelplug")],
    ids=["lightning-itself", "lightning-written", "accelplug-written"],
)
def test_load_from_checkpoint_rebuilds_the_module_from_its_hyperparameters(
    writer: str, reader: str, tmp_path: Path
) -> None:
    path = _fit_and_save(FRAMEWORKS[writer], tmp_path, hidden=5)
    written = torch.load(path, weights_only=False)["state_dict"]
    module_class, _ = _classes(FRAMEWORKS[reader])
    loaded = module_class.load_from_checkpoint(path, tag="override")
    assert dict(loaded.hparams) == {"hidden": 5, "lr": 0.05, "tag": "override"}
    assert loaded.net[0].out_features == 5
    for key, value in loaded.state_dict().items():
        assert torch.equal(value, written[key]), key
    on_meta = module_class.load_from_checkpoint(path, map_location="cpu")
    assert on_meta.hparams.tag == "saved" and on_meta.device.type == "cpu"


#: a non-strict load names the checkpoint's key the model lacks: Lightning's words, then accelplug's
UNEXPECTED_KEY = (
    r"Found keys that are not in the model state dict but in the checkpoint: \['extra\.weight'\]"
    r"|load_from_checkpoint\(strict=False\): missing from the checkpoint \[\], not in the model \['extra\.weight'\]"
)


def test_strict_and_strict_loading_behave_as_in_lightning(tmp_path: Path) -> None:
    path = _fit_and_save(lightning, tmp_path, hidden=3)  # a file both read
    state = torch.load(path, weights_only=False)
    state["state_dict"]["extra.weight"] = torch.zeros(1)
    torch.save(state, tmp_path / "extra.ckpt")
    outcomes = {}
    for name, framework in FRAMEWORKS.items():
        module_class, _ = _classes(framework)
        with pytest.raises(RuntimeError, match=r"extra\.weight"):
            module_class.load_from_checkpoint(tmp_path / "extra.ckpt")
        with pytest.warns(UserWarning, match=UNEXPECTED_KEY):
            relaxed = module_class.load_from_checkpoint(tmp_path / "extra.ckpt", strict=False)

        class Lenient(module_class):  # type: ignore[misc, valid-type]
            def __init__(self, **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self.strict_loading = False

        with pytest.warns(UserWarning, match=UNEXPECTED_KEY):  # strict_loading=False: the same non-strict load
            lenient = Lenient.load_from_checkpoint(tmp_path / "extra.ckpt")
        with pytest.raises((ValueError, accelplug.MisconfigurationException)):
            Lenient.load_from_checkpoint(tmp_path / "extra.ckpt", strict=True)
        outcomes[name] = (relaxed.hparams.hidden, lenient.strict_loading, module_class().strict_loading)
    assert outcomes["accelplug"] == outcomes["lightning"] == (3, False, True)


#: Lightning 2.6 deprecates to_torchscript, with these words; accelplug gives the same warning
TORCHSCRIPT_DEPRECATED = "`LightningModule.to_torchscript` has been deprecated in v2.7 and will be removed in v2.8."


# torch's deprecations of the TorchScript calls the test makes (Lightning's export and accelplug's make the same)
@pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.trace` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.trace_method` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.save` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.load` is deprecated:DeprecationWarning",
)
def test_freeze_unfreeze_and_torchscript_match(tmp_path: Path) -> None:
    seen = {}
    for name, framework in FRAMEWORKS.items():
        module_class, _ = _classes(framework)
        torch.manual_seed(1)
        model = module_class()
        frozen = model.freeze()
        state = [frozen is model, model.training, any(p.requires_grad for p in model.parameters())]
        model.unfreeze()
        state += [model.training, all(p.requires_grad for p in model.parameters())]
        with pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED) as scripting:
            scripted = model.to_torchscript(file_path=tmp_path / f"{name}.pt")
        with pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED) as tracing:
            traced = model.to_torchscript(method="trace")
        state += [sum(TORCHSCRIPT_DEPRECATED in str(w.message) for w in call) for call in (scripting, tracing)]
        x = torch.randn(4, 2)
        reloaded = torch.jit.load(tmp_path / f"{name}.pt")  # type: ignore[no-untyped-call]
        state += [model.training, torch.allclose(scripted(x), model(x)), torch.allclose(traced(x), reloaded(x))]
        seen[name] = (state, model.example_input_array.shape)
    assert seen["accelplug"] == seen["lightning"]


def test_to_onnx_names_the_missing_package_or_exports(tmp_path: Path) -> None:
    module_class, _ = _classes(accelplug)
    model = module_class()
    if importlib.util.find_spec("onnx") is None:
        with pytest.raises(ModuleNotFoundError, match="'onnx'"):
            model.to_onnx(tmp_path / "m.onnx")
    else:  # pragma: no cover - onnx is not in the test extra
        model.to_onnx(tmp_path / "m.onnx")
        assert (tmp_path / "m.onnx").stat().st_size > 0
    refused = pytest.raises(accelplug.MisconfigurationException, match="method='jit'")
    with refused, pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED):  # first, as Lightning's comes
        model.to_torchscript(method="jit")


@pytest.mark.filterwarnings(  # torch's deprecations of the trace both exports make
    "ignore:`torch.jit.trace` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.trace_method` is deprecated:DeprecationWarning",
)
def test_the_torchscript_deprecation_is_lightnings_deprecation_category() -> None:
    categories = {}
    for name, framework in FRAMEWORKS.items():
        module_class, _ = _classes(framework)
        with pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED) as caught:
            module_class().to_torchscript(method="trace")
        (warning,) = [w for w in caught if TORCHSCRIPT_DEPRECATED in str(w.message)]
        categories[name] = warning.category
    # By name: Lightning's class is one of two copies (``lightning.fabric``'s or the standalone
    # ``lightning_fabric``'s), depending on which of them earlier tests in this process loaded Lightning through.
    assert categories["lightning"].__name__ == "LightningDeprecationWarning"
    assert issubclass(categories["lightning"], DeprecationWarning)
    assert categories["accelplug"] is accelplug.errors.LightningDeprecationWarning
    assert categories["accelplug"].__name__ == categories["lightning"].__name__


@pytest.mark.parametrize(
    ("arguments", "phrase"),
    [
        ({"method": "temp"}, "only supports 'script' or 'trace'"),
        ({"method": "trace"}, "requires either `example_inputs` or `model.example_input_array`"),
    ],
)
def test_to_torchscript_refuses_a_bad_method_or_a_trace_without_input_as_lightning(
    arguments: dict[str, str], phrase: str
) -> None:
    for framework in FRAMEWORKS.values():
        module_class, _ = _classes(framework)
        model = module_class()
        model.example_input_array = None
        with pytest.raises(ValueError, match=phrase), pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED):
            model.to_torchscript(**arguments)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch's, in both exports
def test_a_module_holding_lightning_modules_without_a_trainer_scripts_as_lightning() -> None:
    outputs = {}
    for name, framework in FRAMEWORKS.items():

        class Inner(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(2, 2)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.layer(x)  # type: ignore[no-any-return]

        class Outer(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                torch.manual_seed(0)
                self.inner = torch.nn.Sequential(Inner(), Inner())

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.inner(x)  # type: ignore[no-any-return]

        model = Outer()
        with pytest.warns(DeprecationWarning, match=TORCHSCRIPT_DEPRECATED):
            scripted = model.to_torchscript()
        outputs[name] = scripted(torch.ones(1, 2))
        with pytest.raises(RuntimeError, match="not attached to a `Trainer`"):  # outside the export, as before
            _ = model.inner[0].trainer
    assert torch.equal(outputs["accelplug"], outputs["lightning"])


def test_from_datasets_builds_the_same_loaders() -> None:
    train = TensorDataset(torch.arange(10.0).unsqueeze(1))
    val = [TensorDataset(torch.zeros(4, 1)), TensorDataset(torch.ones(6, 1))]
    seen: dict[str, tuple[Any, ...]] = {}
    for name, framework in FRAMEWORKS.items():
        data = framework.LightningDataModule.from_datasets(train, val_dataset=val, batch_size=3)
        train_loader, val_loaders = data.train_dataloader(), data.val_dataloader()
        seen[name] = (
            len(train_loader),
            train_loader.batch_size,
            type(train_loader.sampler).__name__,
            [len(loader) for loader in val_loaders],
            [type(loader.sampler).__name__ for loader in val_loaders],
        )
        _, data_class = _classes(framework)
        custom = data_class.from_datasets(train, batch_size=5, n=7)
        seen[name] += (dict(custom.hparams),)
    assert seen["accelplug"] == seen["lightning"]


def test_a_datamodule_loads_from_a_checkpoint(tmp_path: Path) -> None:
    lightning_written = _fit_and_save(lightning, tmp_path / "lightning", hidden=2)
    expected = dict(_classes(lightning)[1].load_from_checkpoint(lightning_written, n=9).hparams)
    assert dict(_classes(accelplug)[1].load_from_checkpoint(lightning_written, n=9).hparams) == expected
    accelplug_written = _fit_and_save(accelplug, tmp_path / "accelplug", hidden=2)
    assert dict(_classes(accelplug)[1].load_from_checkpoint(accelplug_written, n=9).hparams) == expected
