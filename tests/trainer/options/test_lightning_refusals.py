"""What the Trainer refuses, it refuses as Lightning 2.6 does: the same exception type (accelplug's error subclasses
both) and Lightning's key phrase; and what Lightning accepts (``max_steps=0``), it accepts."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import torch

import accelplug
from accelplug import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

QUIET = {"logger": False, "enable_progress_bar": False, "enable_model_summary": False, "enable_checkpointing": False}


def _refusal(framework: Any, **options: Any) -> BaseException:
    with quiet_lightning(framework), pytest.raises(Exception) as caught:  # noqa: PT011 - the type is what is compared
        framework.Trainer(**options)
    return caught.value


@pytest.mark.parametrize(
    ("options", "kind", "phrase"),
    [
        ({"max_epochs": -100}, MisconfigurationException, "`max_epochs` must be a non-negative integer or -1"),
        ({"max_steps": -2}, MisconfigurationException, "`max_steps` must be a non-negative integer or -1"),
        ({"gradient_clip_val": (1, 2)}, TypeError, "`gradient_clip_val` should be an int or a float"),
        ({"gradient_clip_algorithm": "norm2"}, MisconfigurationException, "`gradient_clip_algorithm` norm2 is invalid"),
        ({"check_val_every_n_epoch": 1.2}, MisconfigurationException, "`check_val_every_n_epoch` should be an integer"),
        ({"abcdefg": 1}, TypeError, "__init__() got an unexpected keyword argument 'abcdefg'"),
    ],
    ids=lambda value: ",".join(value) if isinstance(value, dict) else None,
)
def test_a_bad_option_is_refused_with_lightnings_type_and_phrase(
    options: dict[str, Any], kind: type[BaseException], phrase: str
) -> None:
    from lightning.fabric.utilities.exceptions import MisconfigurationException as LightningMisconfiguration

    ours, theirs = _refusal(accelplug, **options), _refusal(lightning, **options)
    assert isinstance(theirs, LightningMisconfiguration if kind is MisconfigurationException else kind)
    assert phrase in str(theirs)
    assert isinstance(ours, kind) and isinstance(ours, MisconfigurationException)
    assert phrase in str(ours)


@pytest.mark.parametrize("framework", [lightning, accelplug], ids=["lightning", "accelplug"])
def test_max_steps_zero_is_accepted_and_fit_trains_nothing(framework: Any) -> None:
    demos = "accelplug.demos.boring_classes" if framework is accelplug else "lightning.pytorch.demos.boring_classes"
    BoringModel = importlib.import_module(demos).BoringModel

    with quiet_lightning(framework):
        trainer = framework.Trainer(max_steps=0, **QUIET)
        assert trainer.max_steps == 0 and trainer.fit_loop.done
        model = BoringModel()
        before = [p.detach().clone() for p in model.parameters()]
        trainer.fit(model)
    assert trainer.global_step == 0
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


@pytest.mark.parametrize("method", ["fit", "validate", "test", "predict"])
def test_a_module_without_the_methods_a_call_needs_is_refused_as_not_a_lightning_module(
    method: str, tmp_path: Any
) -> None:
    phrase = re.compile(r"must be a `LightningModule`.*got `Linear")
    for framework in (lightning, accelplug):
        trainer = framework.Trainer(**{**QUIET, "logger": True}, default_root_dir=tmp_path / "run")
        with quiet_lightning(framework), pytest.raises(TypeError, match=phrase):
            getattr(trainer, method)(torch.nn.Linear(2, 2))
    assert not (tmp_path / "run").exists()  # refused before anything was set up or written


@pytest.mark.parametrize("method", ["validate", "test", "predict"])
def test_an_evaluation_without_a_model_or_an_earlier_fit_is_a_type_error(method: str) -> None:
    for framework in (lightning, accelplug):
        with quiet_lightning(framework), pytest.raises(TypeError, match=rf"{method}\(\)` requires a `LightningModule"):
            getattr(framework.Trainer(**QUIET), method)()


def test_save_checkpoint_before_any_call_is_an_attribute_error(tmp_path: Any) -> None:
    for framework in (lightning, accelplug):
        with quiet_lightning(framework), pytest.raises(AttributeError, match="only possible if a model is attached"):
            framework.Trainer(**QUIET).save_checkpoint(tmp_path / "x.ckpt")
