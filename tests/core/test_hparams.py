"""``save_hyperparameters``: one mixin, the same rules for the LightningModule, the LightningDataModule and any class
that inherits ``HyperparametersMixin``, each compared with Lightning 2.6.

Every test builds the same classes on Lightning's bases and on accelplug's and compares what ``hparams`` holds;
the checkpoint tests also load each framework's file with the other framework.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from argparse import Namespace
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.core.hparams import AttributeDict, HyperparameterNameError
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.core.mixins import HyperparametersMixin
from tests.callbacks.parity import FRAMEWORKS, quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare with Lightning, not installed here")

KINDS = ("module", "datamodule", "mixin")


def base(framework: Any, kind: str) -> Any:
    """The class a user subclasses: the LightningModule, the LightningDataModule or the bare mixin."""
    if kind == "module":
        return framework.LightningModule
    if kind == "datamodule":
        return framework.LightningDataModule
    return HyperparametersMixin if framework is accelplug else lightning.pytorch.core.mixins.HyperparametersMixin


def on_both(build: Callable[[Any], Any]) -> list[Any]:
    """``build(framework)`` under Lightning, then under accelplug."""
    results = []
    for framework in FRAMEWORKS.values():
        with quiet_lightning(framework):
            results.append(build(framework))
    return results


def recorded(obj: Any) -> dict[str, Any]:
    return dict(obj.hparams)


# ---- what is recorded --------------------------------------------------------------------------------------------
def test_a_datamodule_records_a_namespace_it_was_given() -> None:
    """The drifted copy of issue 28: the datamodule's own save_hyperparameters crashed on a Namespace."""

    class Data(accelplug.LightningDataModule):
        def __init__(self, config: Namespace) -> None:
            super().__init__()
            self.save_hyperparameters(config)

    assert recorded(Data(Namespace(batch_size=8, root="/data"))) == {"batch_size": 8, "root": "/data"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("container", [Namespace, dict, AttributeDict])
def test_one_container_records_its_items_as_lightnings(kind: str, container: Callable[..., Any]) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Config(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, config: Any, other: int = 3) -> None:
                super().__init__()
                self.save_hyperparameters(config)

        obj = Config(container(lr=0.1, layers=2))
        assert isinstance(obj.hparams, dict)
        return {**recorded(obj), "name": obj._hparams_name}

    assert on_both(build) == [{"lr": 0.1, "layers": 2, "name": "config"}] * 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("empty", [{}, Namespace()])
def test_an_empty_container_records_nothing(kind: str, empty: Any) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Config(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, config: Any) -> None:
                super().__init__()
                self.save_hyperparameters(config)

        return recorded(Config(empty))

    assert on_both(build) == [{}, {}]


@pytest.mark.parametrize("kind", KINDS)
def test_named_arguments_record_those_only(kind: str) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Named(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float, width: int, seed: int = 0) -> None:
                super().__init__()
                self.save_hyperparameters("lr", "seed")

        return recorded(Named(0.1, 4))

    assert on_both(build) == [{"lr": 0.1, "seed": 0}] * 2


def test_a_name_that_is_no_argument_is_a_key_error_as_in_lightning() -> None:
    def build(framework: Any) -> BaseException:
        class Named(base(framework, "module")):  # type: ignore[misc]
            def __init__(self, lr: float) -> None:
                super().__init__()
                self.save_hyperparameters("learning_rate")

        with pytest.raises(KeyError) as raised:
            Named(0.1)
        return raised.value

    lightnings, ours = on_both(build)
    assert type(lightnings) is KeyError
    assert isinstance(ours, HyperparameterNameError) and isinstance(ours, MisconfigurationException)
    assert "'learning_rate' is not an argument of Named.__init__; its arguments are ['lr']" in str(ours)


@pytest.mark.parametrize("kind", KINDS)
def test_a_number_or_string_alone_is_refused_with_lightnings_phrase(kind: str) -> None:
    def build(framework: Any) -> str:
        class Single(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float) -> None:
                super().__init__()
                self.save_hyperparameters(lr)

        with pytest.raises(ValueError, match=r"Primitives \(<class 'bool'>, <class 'int'>") as raised:
            Single(0.1)
        return raised.typename

    assert on_both(build) == ["ValueError", "MisconfigurationException"]


# ---- ignore ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ignore", ["width", ["width", "seed"], ("width",)])
def test_ignore_leaves_arguments_out(kind: str, ignore: Any) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Ignoring(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float = 0.1, width: int = 4, seed: int = 0) -> None:
                super().__init__()
                self.save_hyperparameters(ignore=ignore)

        return recorded(Ignoring())

    lightnings, ours = on_both(build)
    assert ours == lightnings and "width" not in ours and ours["lr"] == 0.1


@pytest.mark.parametrize("kind", KINDS)
def test_a_subclass_ignore_removes_what_its_base_recorded(kind: str) -> None:
    def build(framework: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        class Base(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float, width: int, seed: int) -> None:
                super().__init__()
                self.save_hyperparameters(ignore="lr")

        class Child(Base):
            def __init__(self, lr: float, width: int, seed: int) -> None:
                super().__init__(lr, width, seed)
                self.save_hyperparameters(ignore=["width"])

        child = Child(0.1, 4, 7)
        return recorded(child), dict(child.hparams_initial)

    assert on_both(build) == [({"lr": 0.1, "seed": 7}, {"lr": 0.1, "seed": 7})] * 2


# ---- which frames are read ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_every_init_of_the_object_is_read_the_most_derived_value_winning(kind: str) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Base(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, width: int = 64, depth: int = 2) -> None:
                super().__init__()
                self.save_hyperparameters()

        class Child(Base):
            def __init__(self, *args: Any, dropout: float = 0.5, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)

        class Grandchild(Child):
            def __init__(self, width: int = 8, **kwargs: Any) -> None:
                super().__init__(width=width, **kwargs)

        return recorded(Grandchild(depth=3, dropout=0.1))

    assert on_both(build) == [{"width": 8, "depth": 3, "dropout": 0.1}] * 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_call_from_a_helper_method_reads_the_init_that_called_it(kind: str) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Helped(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float = 0.1, other: str = "x") -> None:
                super().__init__()
                self._record()

            def _record(self) -> None:
                self.save_hyperparameters()

        class Factory:
            def make(self, **kwargs: Any) -> Any:
                return Helped(**kwargs)

        return recorded(Factory().make(lr=0.5))

    assert on_both(build) == [{"lr": 0.5, "other": "x"}] * 2


@pytest.mark.parametrize("kind", KINDS)
def test_an_enclosing_object_is_read_only_when_it_has_the_mixin(kind: str) -> None:
    """Lightning's rule: an object built inside another's ``__init__`` also records the outer arguments when the
    outer object has the mixin too, never when it is a plain class."""

    def build(framework: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        class Inner(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, dropout: float, init: str) -> None:
                super().__init__()
                self.save_hyperparameters(ignore=["dropout"])

        class Outer(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, batch_size: int) -> None:
                super().__init__()
                self.inner = Inner(dropout=0.1, init="xavier")

        class Plain:
            def __init__(self, seed: int = 42) -> None:
                self.inner = Inner(dropout=0.2, init="normal")

        return recorded(Outer(batch_size=64).inner), recorded(Plain().inner)

    expected = ({"init": "xavier", "batch_size": 64}, {"init": "normal"})
    assert on_both(build) == [expected] * 2


@pytest.mark.parametrize("kind", KINDS)
def test_an_argument_reassigned_before_the_call_is_recorded_as_reassigned(kind: str) -> None:
    def build(framework: Any) -> dict[str, Any]:
        class Reassigning(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, lr: float, width: int) -> None:
                super().__init__()
                lr = lr * 10
                unrelated = 1  # noqa: F841 - a local variable, not an argument: never recorded
                self.save_hyperparameters()

        return recorded(Reassigning(0.1, 4))

    assert on_both(build) == [{"lr": 1.0, "width": 4}] * 2


@pytest.mark.parametrize("kind", ["module", "datamodule"])
def test_a_dataclass_records_its_init_fields(kind: str) -> None:
    def build(framework: Any) -> dict[str, Any]:
        @dataclasses.dataclass(eq=False)
        class Fields(base(framework, kind)):  # type: ignore[misc]
            width: int
            name: str = "net"
            cache: int = dataclasses.field(default=0, init=False)

            def __post_init__(self) -> None:
                super().__init__()
                self.save_hyperparameters()

        return recorded(Fields(4))

    assert on_both(build) == [{"width": 4, "name": "net"}] * 2


def test_a_module_argument_gets_lightnings_warning() -> None:
    def build(framework: Any) -> list[str]:
        class WithEncoder(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self, encoder: torch.nn.Module, width: int = 4) -> None:
                super().__init__()
                self.save_hyperparameters()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            WithEncoder(torch.nn.Linear(2, 2))
        return [str(w.message) for w in caught if "nn.Module" in str(w.message)]

    lightnings, ours = on_both(build)
    assert ours == lightnings and len(ours) == 1
    assert "'encoder' is an instance of `nn.Module` and is already saved during checkpointing" in ours[0]


@pytest.mark.parametrize("kind", KINDS)
def test_hparams_initial_keeps_what_was_saved(kind: str) -> None:
    def build(framework: Any) -> tuple[Any, Any]:
        class Saved(base(framework, kind)):  # type: ignore[misc]
            def __init__(self, sizes: list[int]) -> None:
                super().__init__()
                self.save_hyperparameters()

        obj = Saved([1, 2])
        obj.hparams.sizes.append(3)
        obj.hparams.lr = 0.5
        initial = obj.hparams_initial
        initial["sizes"].append(4)  # a copy each time: the saved values cannot be changed through it
        return recorded(obj), dict(obj.hparams_initial)

    assert on_both(build) == [({"sizes": [1, 2, 3], "lr": 0.5}, {"sizes": [1, 2]})] * 2


def test_attribute_dict_reads_and_prints_as_lightnings() -> None:
    ours = AttributeDict(width=4, name="net")
    theirs = lightning.pytorch.utilities.AttributeDict(width=4, name="net")
    assert repr(ours) == repr(theirs) == '"name":  net\n"width": 4'
    with pytest.raises(AttributeError, match="'AttributeDict' object has no attribute 'depth'"):
        _ = ours.depth


# ---- checkpoints, the loggers' files -----------------------------------------------------------------------------
def _fit_and_save(framework: Any, folder: Path, module: Any, datamodule: Any) -> Path:
    trainer = framework.Trainer(
        default_root_dir=folder,
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, datamodule=datamodule)
    path = folder / "model.ckpt"
    trainer.save_checkpoint(path)
    return path


def _classes(framework: Any) -> tuple[Any, Any]:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, config: Namespace) -> None:
            super().__init__()
            self.save_hyperparameters(config)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).pow(2).mean()  # type: ignore[no-any-return]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def __init__(self, options: dict[str, Any], root: str = "/data") -> None:
            super().__init__()
            self.save_hyperparameters(options)
            self.position = 0

        def train_dataloader(self) -> Any:
            dataset = torch.utils.data.TensorDataset(torch.randn(8, 2))
            return torch.utils.data.DataLoader(dataset, batch_size=self.hparams.batch_size)

        def state_dict(self) -> dict[str, Any]:
            return {"position": 5}

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            self.position = state_dict["position"]

    return Regression, Data


def test_checkpoints_give_each_container_back_to_its_argument_in_either_framework(tmp_path: Path) -> None:
    written = {}
    for name, framework in FRAMEWORKS.items():
        module_class, data_class = _classes(framework)
        with quiet_lightning(framework):
            module = module_class(Namespace(lr=0.1, width=3))
            written[name] = _fit_and_save(framework, tmp_path / name, module, data_class({"batch_size": 4}))
    ours, theirs = (torch.load(written[n], weights_only=True) for n in ("accelplug", "lightning"))
    for key in ("hyper_parameters", "hparams_name", "datamodule_hyper_parameters", "datamodule_hparams_name"):
        assert ours[key] == theirs[key], key
    assert ours["_classes.<locals>.Data"] == theirs["_classes.<locals>.Data"] == {"position": 5}
    module_class, data_class = _classes(accelplug)
    for path in written.values():
        loaded = module_class.load_from_checkpoint(path, width=5)
        assert (loaded.hparams.lr, loaded.hparams.width) == (0.1, 5)
        data = data_class.load_from_checkpoint(path)
        assert (dict(data.hparams), data.position) == ({"batch_size": 4}, 5)


def test_a_value_pickle_cannot_write_leaves_hparams_when_fit_starts(tmp_path: Path) -> None:
    module_class, data_class = _classes(accelplug)
    module = module_class(Namespace(lr=0.1, transform=lambda x: x))
    with pytest.warns(UserWarning, match="Attribute 'transform' removed from hparams because it cannot be pickled"):
        _fit_and_save(accelplug, tmp_path, module, data_class({"batch_size": 4}))
    assert dict(module.hparams) == {"lr": 0.1}


class Switch(Enum):
    ON = "on"


HPARAMS = {"lr": 0.01, "sizes": (8, 4), "nested": {"a": 1}, "switch": Switch.ON, "dtype": torch.float32}


def test_hparams_yaml_is_written_and_read_as_lightnings(tmp_path: Path) -> None:
    from lightning.pytorch.core import saving as theirs

    from accelplug.pytorch.core import saving as ours

    texts = []
    for side, saving in (("lightning", theirs), ("accelplug", ours)):
        path = tmp_path / f"{side}.yaml"
        with pytest.warns(UserWarning, match="Skipping 'dtype' parameter because it is not possible to safely dump"):
            saving.save_hparams_to_yaml(path, Namespace(**copy.deepcopy(HPARAMS)))
        texts.append(path.read_text())
        assert ours.load_hparams_from_yaml(path) == theirs.load_hparams_from_yaml(path)
    assert texts[0] == texts[1]
    assert ours.load_hparams_from_yaml(tmp_path / "accelplug.yaml")["sizes"] == (8, 4)
    with pytest.raises(RuntimeError, match="Missing folder"):
        ours.save_hparams_to_yaml(tmp_path / "absent" / "hparams.yaml", {"lr": 0.1})
