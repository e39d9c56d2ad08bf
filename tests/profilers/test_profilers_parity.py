"""``Trainer(profiler=...)`` against Lightning 2.6: the same actions, counted the same, written to the same files.

Each test runs the same small module under both frameworks (``tests/callbacks/parity.py``'s regression) with
each framework's own profiler class, and compares what the profilers recorded or wrote.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import FRAMEWORKS, data, make_module, quiet_lightning

STAGES = ("fit", "validate", "test", "predict")


def _module(framework: Any) -> Any:
    module = make_module(framework)
    module.test_step = module.validation_step
    module.test_dataloader = module.val_dataloader
    module.predict_dataloader = module.val_dataloader
    module.predict_step = lambda batch, batch_idx: module(batch[0])
    return module


def _run(framework_name: str, stage: str, root: Path, make_profiler: Any, **options: Any) -> Any:
    """Run ``stage`` under one framework with ``make_profiler(profilers module)``; that profiler."""
    framework = FRAMEWORKS[framework_name]
    profilers = importlib.import_module(f"{framework_name}.pytorch.profilers")
    profiler = make_profiler(profilers)
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 2,
        "limit_train_batches": 3,
        "limit_val_batches": 2,
        "limit_test_batches": 2,
        "limit_predict_batches": 2,
        "num_sanity_val_steps": 1,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": root,
        "profiler": profiler,
        **options,
    }
    trainer = framework.Trainer(**settings)
    with quiet_lightning(framework):
        getattr(trainer, stage)(_module(framework))
    return profiler


def _both(tmp_path: Path, stage: str, make_profiler: Any, **options: Any) -> dict[str, Any]:
    found = {}
    for name in FRAMEWORKS:
        (tmp_path / name).mkdir()
        found[name] = _run(name, stage, tmp_path / name, make_profiler, **options)
    return found


@pytest.mark.parametrize("stage", STAGES)
def test_simple_profiler_records_lightnings_actions_as_often(tmp_path: Path, stage: str) -> None:
    """Every action name Lightning's SimpleProfiler records (hooks of callbacks, module and strategy, the loops'
    fetches, epochs and batches, checkpoint saves), each as many times."""
    profilers = _both(tmp_path, stage, lambda p: p.SimpleProfiler())
    counts = {name: {k: len(v) for k, v in p.recorded_durations.items()} for name, p in profilers.items()}
    assert counts["accelplug"] == counts["lightning"]
    assert "run_training_batch" in counts["accelplug"] or stage != "fit"


def test_simple_profiler_counts_match_with_accumulation_and_a_callback(tmp_path: Path) -> None:
    """Accumulation (optimizer steps on every second batch) and a callback that overrides a hook."""

    def profiler(profilers: Any) -> Any:
        return profilers.SimpleProfiler()

    found = {}
    for name, framework in FRAMEWORKS.items():
        (tmp_path / name).mkdir()

        class Counting(framework.Callback):  # type: ignore[misc, name-defined]
            def on_train_batch_end(self, *args: Any) -> None:
                pass

        found[name] = _run(
            name, "fit", tmp_path / name, profiler, accumulate_grad_batches=2, max_epochs=1, callbacks=[Counting()]
        )
    counts = {name: {k: len(v) for k, v in p.recorded_durations.items()} for name, p in found.items()}
    assert counts["accelplug"] == counts["lightning"]
    assert counts["accelplug"]["[LightningModule]Regression.optimizer_step"] == 2  # batches 2 and 3 (the last)
    key = next(
        k for k in counts["accelplug"] if k.startswith("[Callback]") and k.endswith("Counting.on_train_batch_end")
    )
    assert counts["accelplug"][key] == 3


@pytest.mark.parametrize(
    ("make", "stage"),
    [
        (lambda p: p.SimpleProfiler(filename="perf"), "fit"),
        (lambda p: p.SimpleProfiler(filename="perf", extended=False), "test"),
        (lambda p: p.AdvancedProfiler(filename="adv", line_count_restriction=5), "fit"),
    ],
)
def test_reports_are_written_where_lightning_writes_them(tmp_path: Path, make: Any, stage: str) -> None:
    """``{log_dir}/{stage}-{filename}.txt``, headed and laid out as Lightning's (the figures differ, of course)."""
    _both(tmp_path, stage, make)
    reports = {name: sorted((tmp_path / name).rglob("*.txt")) for name in FRAMEWORKS}
    relative = {name: [str(p.relative_to(tmp_path / name)) for p in paths] for name, paths in reports.items()}
    assert relative["accelplug"] == relative["lightning"] == [f"{stage}-{_name(make)}.txt"]
    texts = {name: paths[0].read_text() for name, paths in reports.items()}
    first_lines = {name: text.splitlines()[:2] for name, text in texts.items()}
    assert first_lines["accelplug"] == first_lines["lightning"]


def _name(make: Any) -> str:
    return str(make(importlib.import_module("accelplug.profilers")).filename)


def test_simple_profiler_table_has_lightnings_columns_and_rows(tmp_path: Path) -> None:
    _both(tmp_path, "validate", lambda p: p.SimpleProfiler(filename="perf"))
    tables = {}
    for name in FRAMEWORKS:
        text = (tmp_path / name / "validate-perf.txt").read_text()
        rows = [line for line in text.splitlines() if line.startswith("|")]
        # the action column and the call counts (durations are times): the same rows in a table of the same shape
        tables[name] = sorted((r.split("|")[1].strip(), r.split("|")[3].strip()) for r in rows if "Total" not in r)
    assert tables["accelplug"] == tables["lightning"]


def test_pytorch_profiler_writes_chrome_traces_named_as_lightnings(tmp_path: Path) -> None:
    """On the CPU: one Chrome trace per recorded window, named ``{stage}-{filename}-{action}.<ns>.pt.trace.json``,
    and a report of operators under Lightning's action ranges."""
    # three training steps are fewer than torch's default schedule needs: both frameworks say they replace it, once
    # per process (each module's ``warning_cache``, cleared here so that an earlier test's warning does not hide it)
    for framework in FRAMEWORKS.values():
        importlib.import_module(f"{framework.__name__}.pytorch.profilers.pytorch").warning_cache.clear()
    with pytest.warns(UserWarning, match="The PyTorch Profiler default schedule will be overridden") as seen:
        profilers = _both(tmp_path, "fit", lambda p: p.PyTorchProfiler(filename="pt", row_limit=5))
    assert {"lightning", "accelplug"} <= {part for w in seen for part in Path(w.filename).parts}
    traces = {}
    for name in FRAMEWORKS:
        files = [p.name for p in (tmp_path / name).rglob("*.pt.trace.json")]
        assert files, f"{name} wrote no trace"
        traces[name] = sorted({re.sub(r"\.\d+\.pt\.trace\.json$", "", f) for f in files})
    assert traces["accelplug"] == traces["lightning"]
    report = (tmp_path / "accelplug" / "fit-pt.txt").read_text()
    assert report.startswith("FIT Profiler Report")
    assert "Profile stats for: records" in report and "Self CPU time total" in report
    assert len([line for line in report.splitlines() if "[pl]" in line or "aten::" in line]) <= 5  # row_limit
    trace = next((tmp_path / "accelplug").rglob("*.pt.trace.json")).read_text()
    assert "[pl][module]torch.nn.modules.linear.Linear: layer" in trace
    assert "[pl][profile]" in trace
    assert profilers["accelplug"].profiler is None  # stopped and described at the end of the call


def _datamodule(framework: Any) -> Any:
    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def prepare_data(self) -> None:
            pass

        def train_dataloader(self) -> Any:
            return data()

        def state_dict(self) -> dict[str, Any]:
            return {"seen": 1}

    return Data()


def test_a_datamodules_hooks_are_profiled_as_lightnings(tmp_path: Path) -> None:
    """Lightning times the datamodule's hooks it calls (``setup``, ``teardown`` and ``state_dict`` even where they
    are not overridden, ``prepare_data`` where it is) as ``[LightningDataModule]<class>.<hook>``."""
    counts = {}
    for name, framework in FRAMEWORKS.items():
        profilers = importlib.import_module(f"{name}.pytorch.profilers")
        trainer = framework.Trainer(
            accelerator="cpu",
            max_steps=2,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / name,
            profiler=profilers.SimpleProfiler(),
        )
        with quiet_lightning(framework):
            trainer.fit(make_module(framework, validation=False), datamodule=_datamodule(framework))
        recorded = trainer.profiler.recorded_durations
        counts[name] = {k: len(v) for k, v in recorded.items() if k.startswith("[LightningDataModule]")}
    assert counts["lightning"] == {
        f"[LightningDataModule]Data.{hook}": 1
        for hook in ("prepare_data", "setup", "train_dataloader", "state_dict", "teardown")
    }
    assert counts["accelplug"] == counts["lightning"]


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.filterwarnings(  # on purpose: the resumed Trainer leaves out the ModelCheckpoint that saved the file
    "ignore:Be aware that when using `ckpt_path`, callbacks used to create the checkpoint:UserWarning"
)
def test_a_resumed_fit_profiles_the_datamodules_load_state_dict_as_lightning(tmp_path: Path) -> None:
    counts = {}
    for name, framework in FRAMEWORKS.items():
        profilers = importlib.import_module(f"{name}.pytorch.profilers")
        options = {"accelerator": "cpu", "logger": False, "enable_progress_bar": False, "enable_model_summary": False}
        first = framework.Trainer(max_steps=1, default_root_dir=tmp_path / name, **options)
        with quiet_lightning(framework):
            first.fit(make_module(framework, validation=False), datamodule=_datamodule(framework))
        resumed = framework.Trainer(
            max_steps=2,
            enable_checkpointing=False,
            default_root_dir=tmp_path / name,
            profiler=profilers.SimpleProfiler(),
            **options,
        )
        with quiet_lightning(framework):
            resumed.fit(
                make_module(framework, validation=False),
                datamodule=_datamodule(framework),
                ckpt_path=first.checkpoint_callback.best_model_path,
            )
        counts[name] = {k: len(v) for k, v in resumed.profiler.recorded_durations.items() if "DataModule" in k}
    assert counts["lightning"]["[LightningDataModule]Data.load_state_dict"] == 1
    assert counts["accelplug"] == counts["lightning"]
