"""What a Trainer call checks of the module before it runs, with Lightning 2.6's phrases: the step a call needs,
``predict``'s ``predict_step``/``forward``, fit's validation step without data (or data without a step), and the
options manual optimization cannot honour."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import FRAMEWORKS, quiet_lightning

pytestmark = pytest.mark.filterwarnings(
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
    "ignore:.*is a fraction of an epoch.*",
)


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    settings = {
        "accelerator": "cpu",
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "max_steps": 1,
        "limit_val_batches": 1,
        "default_root_dir": root,
    }
    return framework.Trainer(**{**settings, **options})


def _module(framework: Any, path: str) -> Any:
    return importlib.import_module(f"{framework.__name__}.{path}")


def _boring(framework: Any, **removed: Any) -> Any:
    module = _module(framework, "pytorch.demos.boring_classes").BoringModel()
    for name in removed:
        setattr(module, name, None)
    return module


def _refusal(framework: Any, root: Path, method: str, module: Any, **options: Any) -> BaseException:
    with pytest.raises(Exception) as caught, quiet_lightning(framework):  # noqa: PT011 (each framework's own type)
        getattr(_trainer(framework, root, **options), method)(module)
    return caught.value


@pytest.mark.parametrize(
    ("method", "removed", "phrase"),
    [
        ("fit", "training_step", "No `training_step()` method defined."),
        ("fit", "configure_optimizers", "No `configure_optimizers()` method defined."),
        ("validate", "validation_step", "No `validation_step()` method defined to run `Trainer.validate`"),
        ("test", "test_step", "No `test_step()` method defined to run `Trainer.test`"),
        ("predict", "predict_step", "`predict_step` cannot be None to run `Trainer.predict`"),
        ("predict", "forward", "`Trainer.predict` requires `forward` method to run."),
    ],
)
def test_a_missing_method_is_refused_with_lightnings_phrase(
    tmp_path: Path, method: str, removed: str, phrase: str
) -> None:
    for name, framework in FRAMEWORKS.items():
        error = _refusal(framework, tmp_path / name, method, _boring(framework, **{removed: None}))
        assert isinstance(error, _module(framework, "pytorch.utilities.exceptions").MisconfigurationException), name
        assert phrase in str(error), (name, str(error))


@pytest.mark.parametrize(
    ("option", "phrase"),
    [
        ({"gradient_clip_val": 1.0}, "Automatic gradient clipping is not supported for manual optimization"),
        ({"accumulate_grad_batches": 2}, "Automatic gradient accumulation is not supported for manual optimization"),
    ],
)
def test_options_manual_optimization_cannot_honour_are_refused_with_lightnings_phrase(
    tmp_path: Path, option: dict[str, Any], phrase: str
) -> None:
    for name, framework in FRAMEWORKS.items():
        module = _boring(framework)
        module.automatic_optimization = False
        error = _refusal(framework, tmp_path / name, "fit", module, logger=True, **option)
        assert phrase in str(error) and f"Trainer({next(iter(option))}=" in str(error), (name, str(error))
        assert not (tmp_path / name / "lightning_logs").exists(), "refused before the logger wrote anything"


@pytest.mark.parametrize(
    ("removed", "phrase", "category"),
    [
        ("validation_step", "You passed in a `val_dataloader` but have no `validation_step`. Skipping val loop", None),
        ("val_dataloader", "You defined a `validation_step` but have no `val_dataloader`. Skipping val loop", True),
    ],
)
def test_fit_warns_when_validation_has_a_step_or_data_but_not_both(
    tmp_path: Path, removed: str, phrase: str, category: Any
) -> None:
    for name, framework in FRAMEWORKS.items():
        with warnings.catch_warnings(record=True) as caught, quiet_lightning(framework):
            warnings.simplefilter("always")
            _trainer(framework, tmp_path / name).fit(_boring(framework, **{removed: None}))
        (found,) = [w for w in caught if phrase in str(w.message)]
        expected = _module(framework, "fabric.utilities.warnings").PossibleUserWarning if category else UserWarning
        assert found.category is expected, name


def test_fit_with_a_validation_step_and_data_does_not_warn(tmp_path: Path) -> None:
    import accelplug

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _trainer(accelplug, tmp_path).fit(_boring(accelplug))
    assert not [w for w in caught if "Skipping val loop" in str(w.message)]
