"""``Trainer(profiler=...)``: what it accepts and refuses, the lean path kept without one, and failures."""

from __future__ import annotations

import contextlib
import gc
import logging
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from accelplug.profilers import AdvancedProfiler, PassThroughProfiler, PyTorchProfiler, SimpleProfiler
from tests.callbacks.parity import make_module


def _trainer(tmp_path: Path, **options: Any) -> accelplug.Trainer:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "max_epochs": 1,
        "limit_train_batches": 2,
        "limit_val_batches": 1,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "default_root_dir": tmp_path,
        **options,
    }
    return accelplug.Trainer(**settings)


@pytest.mark.parametrize(
    ("given", "kind"),
    [
        (None, PassThroughProfiler),
        ("simple", SimpleProfiler),
        ("Advanced", AdvancedProfiler),
        ("PYTORCH", PyTorchProfiler),
    ],
)
def test_names_build_lightnings_profilers(tmp_path: Path, given: Any, kind: type) -> None:
    assert type(_trainer(tmp_path, profiler=given).profiler) is kind


def test_a_profiler_object_is_used_as_given(tmp_path: Path) -> None:
    profiler = SimpleProfiler()
    assert _trainer(tmp_path, profiler=profiler).profiler is profiler
    assert accelplug.pytorch.profilers.SimpleProfiler is SimpleProfiler


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("simpel", ["'simpel'", "did you mean 'simple'", "'advanced'", "'pytorch'"]),
        ("xla", ["XLA", "plugin"]),
        (3, ["profiler=3", "'simple'", "Profiler object"]),
        (SimpleProfiler, ["'simple'", "Profiler object"]),  # the class, not an object
    ],
)
def test_bad_profilers_are_refused_by_name(tmp_path: Path, given: Any, words: list[str]) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        _trainer(tmp_path, profiler=given)
    for word in words:
        assert word.lower() in str(caught.value).lower()


def test_an_unknown_profiler_name_is_refused_with_lightnings_phrase_and_names(tmp_path: Path) -> None:
    lightning_phrase = "When passing string value for the `profiler` parameter of `Trainer`, it can only be one of"
    with pytest.raises(MisconfigurationException, match=re.escape(lightning_phrase)) as caught:
        _trainer(tmp_path, profiler="unknown_profiler")
    assert "['simple', 'advanced', 'pytorch', 'xla']" in str(caught.value)


def test_barebones_refuses_a_profiler_as_lightning_does(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="barebones"):
        accelplug.Trainer(barebones=True, profiler="simple", accelerator="cpu")


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: PyTorchProfiler(sort_by_key="cpu_tim"), ["cpu_tim", "did you mean 'cpu_time'"]),
        (lambda: PyTorchProfiler(schedule=3), ["schedule=3", "callable"]),
        (lambda: PyTorchProfiler(schedule=lambda step: 1), ["ProfilerAction"]),
        (lambda: PyTorchProfiler(row_limit="5"), ["row_limit='5'"]),
        (lambda: AdvancedProfiler(line_count_restriction=-1), ["line_count_restriction=-1"]),
        (lambda: AdvancedProfiler(line_count_restriction=1.5), ["line_count_restriction=1.5"]),
        (lambda: SimpleProfiler(dirpath=3), ["dirpath=3"]),
        (lambda: SimpleProfiler(extended="yes"), ["extended='yes'"]),
    ],
)
def test_bad_profiler_arguments_are_refused_by_name(make: Any, words: list[str]) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        make()
    for word in words:
        assert word.lower() in str(caught.value).lower()


def test_without_a_profiler_the_fit_keeps_its_lean_path(tmp_path: Path) -> None:
    """No profiler: the plain dispatcher (nothing timed, the fast batch path possible); a profiler: the timed one."""
    trainer = _trainer(tmp_path)
    trainer.fit(make_module(accelplug))
    assert trainer._run is not None and trainer._run.hooks.profiler is None
    assert type(trainer._run.hooks).__name__ == "HookDispatcher"
    profiled = _trainer(tmp_path, profiler="simple")
    profiled.fit(make_module(accelplug))
    assert profiled._run is not None and profiled._run.hooks.profiler is profiled.profiler


def test_a_failed_fit_leaves_the_profiler_usable_and_the_module_as_it_was(tmp_path: Path) -> None:
    """Every span closes when a step raises; the timing wrappers put on the module come off again."""
    profiler = SimpleProfiler()
    failing = make_module(accelplug, fail_at_step=1)
    with pytest.raises(RuntimeError, match="failing at step 1"):
        _trainer(tmp_path, profiler=profiler).fit(failing)
    assert profiler.current_actions == {}
    assert "configure_optimizers" not in vars(failing) and "train_dataloader" not in vars(failing)
    _trainer(tmp_path, profiler=profiler).fit(make_module(accelplug))
    assert len(profiler.recorded_durations["run_training_epoch"]) == 2  # one per fit


def test_report_without_a_file_is_logged_at_info(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # the logger's own level (INFO, as Lightning's), whatever the root logger's: caplog's handler sees it
    _trainer(tmp_path, profiler="simple").validate(make_module(accelplug))
    reports = [r for r in caplog.records if r.name == "accelplug.profilers" and "Profiler Report" in r.getMessage()]
    assert [r.levelname for r in reports] == ["INFO"]
    assert "[_EvaluationLoop].val_next" in reports[0].getMessage()


def test_report_without_a_file_shows_on_the_console_when_the_program_configured_no_logging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lightning logs the report at INFO through its own handler; accelplug's console handler does the same."""
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's own capture handlers, for this call
    _trainer(tmp_path, profiler="simple").validate(make_module(accelplug))
    err = capsys.readouterr().err
    assert "VALIDATE Profiler Report" in err and "[_EvaluationLoop].val_next" in err


def test_advanced_profiler_dumps_stats_per_action(tmp_path: Path) -> None:
    import pstats

    profiler = AdvancedProfiler(dirpath=tmp_path / "prof", filename="adv", dump_stats=True)
    _trainer(tmp_path, profiler=profiler).validate(make_module(accelplug))
    dumps = sorted(p.name for p in (tmp_path / "prof").glob("*.prof"))
    assert "validate-adv-[_EvaluationLoop].val_next.prof" in dumps
    pstats.Stats(str(tmp_path / "prof" / "validate-adv-[_EvaluationLoop].val_next.prof"))  # readable by pstats
    assert (tmp_path / "prof" / "validate-adv.txt").read_text().startswith("VALIDATE Profiler Report")


def test_simple_profiler_misuse_is_a_value_error() -> None:
    profiler = SimpleProfiler()
    profiler.start("a")
    with pytest.raises(ValueError, match="already started"):
        profiler.start("a")
    with pytest.raises(ValueError, match="never started"):
        profiler.stop("b")


@pytest.mark.parametrize(
    "make",
    [
        lambda: PyTorchProfiler(row_limit="5"),  # refused before torch's profiler state existed
        lambda: PyTorchProfiler(dirpath=3),  # refused by the base class, before the subclass's state
        lambda: AdvancedProfiler(dirpath=3),
        lambda: AdvancedProfiler(line_count_restriction=-1),
        lambda: SimpleProfiler(extended="yes"),
    ],
)
def test_a_profiler_whose_arguments_were_refused_is_deleted_silently(make: Any) -> None:
    """``__del__`` runs teardown on the half-built object too: it must find nothing to release, not raise."""
    with _unraisable() as seen:
        with pytest.raises(MisconfigurationException):
            make()
        gc.collect()
    assert seen == []


@pytest.mark.parametrize("kind", [SimpleProfiler, AdvancedProfiler, PyTorchProfiler])
def test_a_profiler_never_set_up_or_already_torn_down_is_deleted_silently(tmp_path: Path, kind: type) -> None:
    with _unraisable() as seen:
        never_used = kind()
        del never_used
        used = kind(dirpath=tmp_path, filename="report")
        # Lightning's warning too: two training batches are fewer than torch's default schedule records
        expected = (
            pytest.warns(UserWarning, match="default schedule will be overridden")
            if kind is PyTorchProfiler
            else contextlib.nullcontext()
        )
        with expected:
            _trainer(tmp_path, profiler=used).fit(make_module(accelplug))
        used.teardown(stage=None)  # a second teardown after the Trainer's
        del used
        gc.collect()
    assert seen == []
    assert any(path.name.endswith("report.txt") for path in tmp_path.iterdir())


@contextlib.contextmanager
def _unraisable() -> Iterator[list[str]]:
    """The exceptions Python ignores (those raised by ``__del__``), as text, while the block runs."""
    seen: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda record: seen.append(f"{record.exc_type.__name__}: {record.exc_value}")
    try:
        yield seen
    finally:
        sys.unraisablehook = previous


def test_simple_profiler_sums_durations_with_math_fsum_at_lightnings_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact sums of many small durations (``math.fsum``), through the ``math`` that Lightning's path shows, where
    code written for Lightning replaces ``fsum``."""
    sums: list[list[float]] = []

    def recording_fsum(values: Any) -> float:
        sums.append(list(values))
        return float(sum(values))

    monkeypatch.setattr("accelplug.pytorch.profilers.simple.math.fsum", recording_fsum)
    for extended in (False, True):
        profiler = SimpleProfiler(extended=extended)
        profiler.recorded_durations["action"] = [0.5, 0.25]
        assert "action" in profiler.summary()
    assert sums == [[0.5, 0.25], [0.5, 0.25]]


def test_pytorch_profilers_warning_cache_gives_a_warning_once_until_cleared() -> None:
    from accelplug.pytorch.profilers.pytorch import warning_cache

    warning_cache.clear()
    with pytest.warns(UserWarning, match="once"):
        warning_cache.warn("once")
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")  # only to count: a second warning would be recorded, not shown
        warning_cache.warn("once")
    assert again == []
    warning_cache.clear()
