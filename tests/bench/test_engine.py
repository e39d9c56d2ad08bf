"""The benchmark engine in-process: the timed window, the two loops, the figures, the tables and the chart.

The figures in the report tests are made up to check arithmetic and layout; measured figures come
only from real runs (``tests/cli/test_bench.py``, ``docs/benchmarks.md``).
"""

from __future__ import annotations

import copy
import datetime
import itertools
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug.bench.loops import BenchModule, baseline_round, make_batch, trainer_round
from accelplug.bench.models import get_workload
from accelplug.bench.output import new_run_folder, plan_outputs
from accelplug.bench.report import (
    BenchReport,
    BenchSettings,
    Measurement,
    figures,
    paired_ratios,
    with_speedups,
)
from accelplug.bench.runner import BenchConfig, total_steps, validate
from accelplug.bench.table import markdown, tables
from accelplug.bench.timing import StepWindow
from accelplug.errors import MisconfigurationException

CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---- the timed window ------------------------------------------------------------------------------
def test_the_window_times_the_steps_after_the_warmup_only() -> None:
    clock = itertools.count(start=100.0, step=1.0)  # every read of the clock is one second later
    window = StepWindow(CPU, warmup=2, steps=3, clock=lambda: next(clock))
    window.begin()
    for _ in range(5):
        window.step_done()
    assert window.seen == 5
    assert window.seconds == 1.0  # read after step 2, then after step 5: nothing else reads the clock


def test_without_warmup_the_window_opens_before_the_first_step() -> None:
    window = StepWindow(CPU, warmup=0, steps=1)
    window.begin()
    assert window.started is not None
    window.step_done()
    assert window.seconds >= 0


def test_a_window_that_saw_too_few_steps_has_no_time() -> None:
    window = StepWindow(CPU, warmup=1, steps=2)
    window.begin()
    window.step_done()
    with pytest.raises(RuntimeError, match="saw 1 of 3 steps"):
        _ = window.seconds


def test_the_progress_is_told_after_every_step() -> None:
    ticks: list[int] = []
    window = StepWindow(CPU, warmup=1, steps=2, tick=lambda: ticks.append(window.seen))
    window.begin()
    for _ in range(3):
        window.step_done()
    assert ticks == [1, 2, 3]


# ---- the loops -------------------------------------------------------------------------------------
def _tiny() -> tuple[BenchModule, Any]:
    workload = get_workload("tinycnn")
    torch.manual_seed(0)
    return BenchModule(workload, workload.build()), make_batch(workload, CPU, None)


def test_the_timing_callback_keeps_fit_on_its_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.trainer.loops.fit import FitLoop

    paths: list[str] = []
    run = FitLoop.run

    def spy(self: FitLoop) -> Any:
        paths.append(self.batch_step.__name__)
        return run(self)

    monkeypatch.setattr(FitLoop, "run", spy)
    module, batch = _tiny()
    window = StepWindow(CPU, warmup=1, steps=1)
    trainer_round("train", module, batch, "cpu", "32-true", window)
    assert paths == ["fast_batch"]
    assert window.seen == 2


def test_the_hand_written_loop_does_the_trainers_work_step_for_step() -> None:
    """Same weights, same batch, two SGD steps each way: the same weights after (so the ratio compares loops)."""
    ours, batch = _tiny()
    theirs = copy.deepcopy(ours)
    trainer_round("train", ours, batch, "cpu", "32-true", StepWindow(CPU, warmup=1, steps=1))
    baseline_round("train", theirs, batch, "32-true", StepWindow(CPU, warmup=1, steps=1))
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, msg=name)


def test_evaluation_runs_through_validate_in_eval_mode_without_gradients() -> None:
    module, batch = _tiny()
    seen: list[tuple[bool, bool]] = []
    module.model.register_forward_hook(lambda m, i, o: seen.append((m.training, o.requires_grad)))
    window = StepWindow(CPU, warmup=1, steps=2)
    trainer_round("eval", module, batch, "cpu", "32-true", window)
    assert window.seen == 3 and window.seconds > 0
    assert seen == [(False, False)] * 3


def test_the_tiny_bert_trains_through_the_trainer() -> None:
    workload = get_workload("tinybert")
    module = BenchModule(workload, workload.build())
    batch = make_batch(workload, CPU, None)
    window = StepWindow(CPU, warmup=1, steps=1)
    trainer_round("train", module, batch, "cpu", "bf16-mixed", window)
    assert window.seen == 2


# ---- checking a configuration ----------------------------------------------------------------------
def test_precision_aliases_are_accepted_and_reported_by_their_canonical_name() -> None:
    (target,) = validate(BenchConfig(models=("tinycnn",), accelerators=("cpu",), cpu_precision="bf16"))
    assert target.precision == "bf16-mixed"


@pytest.mark.parametrize("option", ["precision", "cpu_precision"])
def test_a_bad_precision_name_names_its_option(option: str) -> None:
    config = BenchConfig(models=("tinycnn",), accelerators=("cpu",), **{option: "fp16"})
    with pytest.raises(MisconfigurationException, match=f"^--{option.replace('_', '-')}: precision='fp16'"):
        validate(config)


def test_the_progress_total_counts_every_step_of_every_round() -> None:
    config = BenchConfig(models=("tinycnn",), accelerators=("cpu",), cpu_warmup=1, cpu_steps=3, cpu_repeats=2)
    targets = validate(config)
    assert total_steps(config, targets) == 2 * 2 * 4  # phases x rounds x (warmup + steps)
    with_baseline = BenchConfig(**{**config.__dict__, "baseline": True})
    assert total_steps(with_baseline, targets) == 2 * 2 * 2 * 4
    not_on_the_cpu = BenchConfig(**{**config.__dict__, "baseline": True, "cpu_baseline": False})
    assert total_steps(not_on_the_cpu, targets) == 2 * 2 * 4


# ---- figures (made-up timings: arithmetic only) ----------------------------------------------------------
def _measurement(accelerator: str, rounds: list[float], baseline: list[float] | None = None) -> Measurement:
    ours = figures(rounds, 1000, [5] * len(rounds))
    hand = figures(baseline, 1000, [5] * len(baseline)) if baseline else None
    ratios = paired_ratios(rounds, baseline) if baseline else []
    return Measurement(
        model="tinycnn",
        accelerator=accelerator,
        device_name="x",
        phase="train",
        measured_with="Trainer.fit",
        precision="32-true",
        batch_size=100,
        warmup=1,
        steps=10,
        seconds=ours.seconds,
        throughput=ours.throughput,
        throughput_min=ours.throughput_min,
        throughput_max=ours.throughput_max,
        rounds=ours.rounds,
        steps_seen=ours.steps_seen,
        unit="images",
        baseline=hand,
        ratio_to_baseline=None if hand is None else ours.throughput / hand.throughput,
        ratio_min=min(ratios, default=None),
        ratio_max=max(ratios, default=None),
    )


def _report(results: list[Measurement], note: str | None = None) -> BenchReport:
    settings = BenchSettings(
        models=["tinycnn"], accelerators=sorted({m.accelerator for m in results}), steps=10, warmup=1, repeats=3,
        cpu_steps=10, cpu_warmup=1, cpu_repeats=3, precision="32-true", cpu_precision="32-true", cpu_threads=1,
        baseline=any(m.baseline for m in results), cpu_baseline=any(m.baseline for m in results),
    )  # fmt: skip
    return BenchReport(
        accelplug="0", torch="0", created_utc="t", platform="p", command="accelplug bench", settings=settings,
        note=note, results=with_speedups(results),
    )  # fmt: skip


def test_figures_are_the_median_round_and_the_slowest_and_fastest() -> None:
    f = figures([2.0, 1.0, 4.0], samples=1000, steps_seen=[3, 3, 3])
    assert (f.seconds, f.throughput, f.throughput_min, f.throughput_max) == (2.0, 500.0, 250.0, 1000.0)


def test_speedups_go_to_accelerators_only_with_a_range_holding_both_spreads() -> None:
    gpu, cpu = with_speedups([_measurement("cuda", [0.1, 0.2, 0.4]), _measurement("cpu", [10.0, 20.0, 40.0])])
    assert gpu.speedup_vs_cpu == pytest.approx(100.0)
    assert gpu.speedup_min == pytest.approx(2500 / 100)  # the slowest GPU round over the fastest CPU round
    assert gpu.speedup_max == pytest.approx(10000 / 25)
    assert cpu.speedup_vs_cpu is None


def test_paired_ratios_compare_rounds_that_ran_side_by_side() -> None:
    assert paired_ratios([1.0, 2.0], [1.1, 1.8]) == pytest.approx([1.1, 0.9])


def test_a_cpu_only_table_has_no_speedup_column_and_says_why() -> None:
    (table,) = tables(_report([_measurement("cpu", [1.0, 1.1, 1.2])], note="no accelerator here; CPU throughput only"))
    assert not any("speed-up" in h for h in table.headers)
    assert table.caption.startswith("No accelerator here; CPU throughput only.")


def test_the_baseline_adds_a_table_with_the_ratio_and_its_spread() -> None:
    _, versus = tables(_report([_measurement("cpu", [1.0, 1.2, 1.1], baseline=[1.1, 1.1, 1.1])]))
    assert versus.title == "accelplug Trainer against a hand-written loop"
    ratio = versus.rows[0][-1]
    assert (ratio.value, ratio.spread) == ("1.000", "0.92–1.10")
    assert "| tiny CNN (bs 100) | cpu | train | 909 (833–1000) | 909 | 1.000 (0.92–1.10) |" in markdown(
        _report([_measurement("cpu", [1.0, 1.2, 1.1], baseline=[1.1, 1.1, 1.1])])
    )


def test_the_speedup_chart_is_written_as_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from accelplug.bench.chart import draw_chart

    report = _report([_measurement("cuda", [0.1, 0.11, 0.12]), _measurement("cpu", [10.0, 11.0, 12.0])])
    path = draw_chart(report, tmp_path / "c.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- where the files go ------------------------------------------------------------------------------
def test_a_run_folder_taken_in_the_same_second_gets_a_suffix(tmp_path: Path) -> None:
    now = datetime.datetime(2026, 11, 23, 14, 30, 5)
    first = new_run_folder(tmp_path, now)
    first.mkdir()
    assert first.name == "2026-11-23_14-30-05"
    assert new_run_folder(tmp_path, now).name == "2026-11-23_14-30-05-2"


def test_planning_the_outputs_creates_nothing(tmp_path: Path) -> None:
    outputs = plan_outputs(tmp_path / "out", None, None, draw=True, now=datetime.datetime.now())
    assert (outputs.json, outputs.chart, outputs.markdown) == (
        tmp_path / "out" / "bench.json",
        tmp_path / "out" / "bench.png",
        tmp_path / "out" / "bench.md",
    )
    assert not (tmp_path / "out").exists()
    outputs.create()
    assert (tmp_path / "out").is_dir()


def test_an_output_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(MisconfigurationException, match="lies under the file"):
        plan_outputs(tmp_path / "f" / "sub", None, None, draw=False, now=datetime.datetime.now())
