"""A loader that cannot be iterated, passed to a Trainer method or returned by a ``*_dataloader()`` method, is refused
as Lightning 2.6 refuses it: a ``TypeError`` (which user code may catch) with Lightning's words for the call, that is
also accelplug's ``MisconfigurationException``; a datamodule whose instance hides its loader methods is still one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.demos import boring_classes
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity test compares against lightning, not installed here")
lightning_boring = pytest.importorskip("lightning.pytorch.demos.boring_classes")

_CALLS = [("fit", "train_dataloaders", "train"), ("validate", "dataloaders", "val"), ("test", "dataloaders", "test")]


def _refusal(framework: Any, root: Path, call: str, given: dict[str, Any], source: str | None) -> BaseException:
    boring = lightning_boring if framework is lightning else boring_classes
    module = boring.BoringModel()
    for stage in ("train", "val", "test", "predict"):
        setattr(module, f"{stage}_dataloader", None)
    if source is not None:
        setattr(module, f"{source}_dataloader", lambda: None)
    trainer = framework.Trainer(
        default_root_dir=root, fast_dev_run=1, logger=False, enable_progress_bar=False, enable_model_summary=False
    )
    with quiet_lightning(framework), pytest.raises(TypeError) as raised:
        getattr(trainer, call)(module, **given)
    return raised.value


@pytest.mark.parametrize(("call", "argument", "stage"), _CALLS)
@pytest.mark.parametrize("given", [None, object()], ids=["none", "object"])
def test_a_loader_that_cannot_be_iterated_is_a_type_error_in_lightning_words(
    tmp_path: Path, call: str, argument: str, stage: str, given: Any
) -> None:
    phrase = f"An invalid dataloader was passed to `Trainer.{call}({argument}=...)`"
    for framework in (accelplug, lightning):
        caught = _refusal(framework, tmp_path, call, {argument: given}, None)
        assert phrase in str(caught)
    assert isinstance(caught, TypeError)
    ours = _refusal(accelplug, tmp_path, call, {argument: given}, None)
    assert isinstance(ours, MisconfigurationException)
    returned = f"An invalid dataloader was returned from `BoringModel.{stage}_dataloader()`. Found None"
    for framework in (accelplug, lightning):
        assert returned in str(_refusal(framework, tmp_path, call, {}, stage))


def test_a_datamodule_whose_instance_hides_its_loaders_is_still_a_datamodule(tmp_path: Path) -> None:
    dm = boring_classes.BoringDataModule()
    dm.train_dataloader = None  # type: ignore[assignment,method-assign]
    caught = _refusal(accelplug, tmp_path, "fit", {"train_dataloaders": None, "datamodule": dm}, None)
    assert re.search(r"invalid dataloader was passed to `Trainer\.fit\(train_dataloaders", str(caught))
