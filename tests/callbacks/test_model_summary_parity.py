"""``ModelSummary``/``RichModelSummary`` and the callbacks a Trainer adds itself, against Lightning 2.6."""

from __future__ import annotations

import importlib
import logging
from typing import Any
from unittest import mock

import pytest
import torch

import accelplug
from accelplug.errors import MisconfigurationException

from .parity import lightning


def _callbacks(framework: Any) -> Any:
    return importlib.import_module(
        "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    )


def _module(framework: Any, example: bool) -> Any:
    class Net(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.encoder = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
            self.head = torch.nn.Linear(8, 2)
            self.frozen = torch.nn.Linear(2, 2)
            self.frozen.requires_grad_(False)
            self.frozen.eval()
            self.scale = torch.nn.Parameter(torch.ones(3))
            if example:
                self.example_input_array = torch.zeros(4, 32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.frozen(self.head(self.encoder(x)))  # type: ignore[no-any-return]

    return Net()


def _lightning_table(max_depth: int, example: bool) -> str:
    from lightning.pytorch.utilities.model_summary import summarize
    from lightning.pytorch.utilities.model_summary.model_summary import _format_summary_table

    summary = summarize(_module(lightning, example), max_depth=max_depth)
    return _format_summary_table(
        summary.total_parameters,
        summary.trainable_parameters,
        summary.model_size,
        summary.total_training_modes,
        summary.total_flops,
        *summary._get_summary_data(),
    )


@pytest.mark.parametrize("max_depth", [1, 2, -1])
@pytest.mark.parametrize("example", [False, True], ids=["no-example", "example-input"])
def test_the_summary_table_is_lightnings(max_depth: int, example: bool) -> None:
    from accelplug.callbacks.model_summary import format_table, summarize

    ours = format_table(summarize(_module(accelplug, example), max_depth=max_depth))
    assert ours == _lightning_table(max_depth, example)


def test_the_callback_prints_the_table_when_fit_starts(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    from .parity import fit_both

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler = Keep()
    their_logger = logging.getLogger("lightning.pytorch.callbacks.model_summary")
    their_logger.addHandler(handler)
    their_logger.setLevel(logging.INFO)
    try:
        fit_both(tmp_path, lambda f: [_callbacks(f).ModelSummary(max_depth=2)], max_epochs=1)
    finally:
        their_logger.removeHandler(handler)
        their_logger.setLevel(logging.NOTSET)
    (theirs,) = records
    assert theirs.strip() in capsys.readouterr().err


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"enable_model_summary": False},
        {"enable_checkpointing": False},
        {"callbacks": "summary"},
        {"callbacks": "checkpoint-first"},
    ],
    ids=["defaults", "no-summary", "no-checkpointing", "own-summary", "checkpoint-first"],
)
def test_trainer_callbacks_hold_what_lightnings_hold(options: dict[str, Any], tmp_path: Any) -> None:
    def names(framework: Any) -> list[str]:
        settings = {"logger": False, "enable_progress_bar": False, "default_root_dir": tmp_path, **options}
        if settings.get("callbacks") == "summary":
            settings["callbacks"] = [_callbacks(framework).ModelSummary(max_depth=3)]
        elif settings.get("callbacks") == "checkpoint-first":
            settings["callbacks"] = [
                _callbacks(framework).ModelCheckpoint(),
                _callbacks(framework).EarlyStopping(monitor="val_loss"),
            ]
        trainer = framework.Trainer(**settings)
        return [type(c).__name__ for c in trainer.callbacks]

    assert names(accelplug) == names(lightning)


def test_a_bad_depth_is_refused_with_its_value() -> None:
    from accelplug.callbacks import ModelSummary

    with pytest.raises(MisconfigurationException, match="max_depth=-2"):
        ModelSummary(max_depth=-2)


def test_the_rich_table_goes_to_richs_console_as_lightnings() -> None:
    """Lightning's ``RichModelSummary`` prints on ``rich.get_console()``: a project that swaps that console (to
    capture the table) gets the table there, the model size written as a size (``5,500.000``), not a count."""
    import io

    from rich.console import Console

    captured = {}
    for name, framework in (("lightning", lightning), ("accelplug", accelplug)):
        out = io.StringIO()
        with mock.patch("rich.get_console", return_value=Console(file=out, width=200)):
            _callbacks(framework).RichModelSummary.summarize(
                [
                    (" ", ["0"]),
                    ("Name", ["layer"]),
                    ("Type", ["Linear"]),
                    ("Params", ["66  "]),
                    ("Mode", ["train"]),
                    ("FLOPs", ["0"]),
                ],
                total_parameters=66,
                trainable_parameters=66,
                model_size=5500.0,
                total_training_modes={"train": 1, "eval": 0},
                total_flops=0,
            )
        captured[name] = out.getvalue()
    assert "5,500.000" in captured["accelplug"]
    assert captured["accelplug"] == captured["lightning"]


def test_without_rich_the_rich_summary_is_lightnings_module_not_found_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelplug.pytorch.callbacks.rich_model_summary as path

    monkeypatch.setattr(path, "_RICH_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match=r"`RichModelSummary` requires `rich` to be installed") as caught:
        _callbacks(accelplug).RichModelSummary()
    assert isinstance(caught.value, MisconfigurationException)


def test_a_lazy_layer_counts_zero_parameters_with_one_warning_per_process_as_lightning() -> None:
    """Lightning's summary object warns once (its ``warning_cache``) however often the counts are read."""
    import warnings

    from accelplug.pytorch.utilities.model_summary.model_summary import ModelSummary, warning_cache

    class Lazy(accelplug.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.LazyLinear(5)

    summary = ModelSummary(Lazy())
    warning_cache.clear()
    with pytest.warns(UserWarning, match="The total number of parameters detected may be inaccurate"):
        assert summary.total_parameters == 0
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")  # only to count them: a second warning would be recorded here
        assert summary.trainable_parameters == 0
    assert again == []
    warning_cache.clear()
