"""The results table of ``validate``/``test`` is Lightning's, character for character, with and without rich:
scripts and tests that read the captured output move over unchanged."""

from __future__ import annotations

import pytest

from accelplug.trainer.display import summary

lightning_loop = pytest.importorskip("lightning.pytorch.loops.evaluation_loop")

RESULTS = [
    {"loss/dataloader_idx_0": 0.25, "acc/dataloader_idx_0": 0.5},
    {"loss/dataloader_idx_1": 1.0, "only_second/dataloader_idx_1": 3.0, "acc/dataloader_idx_1": 0.75},
    {"a_metric_name_longer_than_half_of_a_narrow_terminal_which_wraps": 1.5},
]


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "text"])
@pytest.mark.parametrize("columns", [120, 60])
@pytest.mark.parametrize("stage", ["test", "validate"])
def test_results_table_matches_lightning(
    rich: bool, columns: int, stage: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(lightning_loop, "_RICH_AVAILABLE", rich)
    monkeypatch.setattr(summary, "_rich_available", lambda: rich)
    results = RESULTS if rich or columns == 120 else RESULTS[:2]  # Lightning's text wrap differs: below
    lightning_loop._EvaluationLoop._print_results([dict(r) for r in results], stage)
    theirs = capsys.readouterr()
    summary.print_results(stage, [dict(r) for r in results])
    ours = capsys.readouterr()
    assert theirs.out and ours.out == theirs.out
    assert ours.err == ""


def test_long_name_wraps_with_its_values_on_the_first_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lightning repeats the values on every piece of a wrapped name; accelplug writes them once, on the first."""
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(summary, "_rich_available", lambda: False)
    summary.print_results("test", [{"x" * 70: 2.5}])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split() for line in lines[3:6]] == [["x" * 30, "2.5"], ["x" * 30], ["x" * 10]]


def test_nothing_logged_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    summary.print_results("test", [{}, {}])
    assert capsys.readouterr() == ("", "")


def test_tensor_values_are_written_as_numbers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.setattr(summary, "_rich_available", lambda: False)
    summary.print_results("test", [{"m": torch.tensor(0.5), "v": torch.tensor([1.0, 2.0])}])  # type: ignore[dict-item]
    rows = [line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines()[3:5]]
    assert rows == [["m", "0.5"], ["v", "[1.0, 2.0]"]]


def _order_of_output(framework: object, capsys: pytest.CaptureFixture[str]) -> list[str]:
    import torch
    from torch.utils.data import DataLoader

    L: object = framework

    class Marker(L.Callback):  # type: ignore[attr-defined,misc,name-defined]
        def on_validation_end(self, trainer: object, module: object) -> None:
            print("<end hook>")

        def teardown(self, trainer: object, module: object, stage: object) -> None:
            print("<teardown hook>")

    class Module(L.LightningModule):  # type: ignore[attr-defined,misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def validation_step(self, batch: torch.Tensor, batch_idx: int) -> None:
            self.log("val_metric", self.layer(batch).sum())

    trainer = L.Trainer(  # type: ignore[attr-defined]
        accelerator="cpu", logger=False, callbacks=[Marker()], enable_progress_bar=False, enable_model_summary=False
    )
    capsys.readouterr()
    trainer.validate(Module(), DataLoader(torch.ones(2, 2), batch_size=1))
    markers = ("<end hook>", "Validate metric", "<teardown hook>")
    lines = capsys.readouterr().out.splitlines()
    return [line.strip(" ┃│").split("  ")[0] for line in lines if any(m in line for m in markers)]


def test_the_table_comes_between_the_end_hooks_and_teardown_as_lightning_prints_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A rich bar stops at teardown: printed after it, the table would come below the bar's last frame."""
    import lightning

    import accelplug

    theirs = _order_of_output(lightning, capsys)
    assert theirs == ["<end hook>", "Validate metric", "<teardown hook>"]
    assert _order_of_output(accelplug, capsys) == theirs
