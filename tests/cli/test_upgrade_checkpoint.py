"""``python -m accelplug.pytorch.utilities.upgrade_checkpoint``: checkpoint files upgraded in place, each original
kept as ``.bak``, as Lightning 2.6's program does, and bad input refused in one line.

Most tests call the program's ``main`` in this process (no torch import per case); one runs it as ``python -m``.
Lightning's own program upgrades copies of the same files side by side.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from accelplug.pytorch.utilities.upgrade_checkpoint import main
from tests.checkpoint.test_migration import OLD_LAYOUTS, _plain

lightning_program = pytest.importorskip(
    "lightning.pytorch.utilities.upgrade_checkpoint", reason="compares with Lightning's upgrade_checkpoint"
)


def _run(*argv: str) -> int:
    try:
        main(list(argv))
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


def _write(folder: Path, name: str, layout: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(OLD_LAYOUTS[layout](), folder / name)
    return folder / name


def test_a_folder_of_old_files_is_upgraded_in_place_as_lightnings_program_upgrades_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = tmp_path / "accelplug"
    _write(ours, "a.ckpt", "1.6.0-loops-without-batches-that-stepped")
    _write(ours / "nested", "b.ckpt", "1.5.10-no-loops")
    _write(ours, "notes.txt", "2.6.6-this-release")  # another extension: left alone
    theirs = tmp_path / "lightning"
    shutil.copytree(ours, theirs)
    with pytest.warns(UserWarning, match="apex support has been removed"):  # b.ckpt holds apex state
        assert _run(str(ours)) == 0
    with pytest.warns(UserWarning, match="apex support has been removed"):
        lightning_program._upgrade(argparse.Namespace(path=str(theirs), extension=".ckpt", map_to_cpu=False))
    for name in ("a.ckpt", "nested/b.ckpt"):
        upgraded = torch.load(ours / name, weights_only=True)
        assert _plain(upgraded) == _plain(torch.load(theirs / name, weights_only=True)), name
        assert upgraded["pytorch-lightning_version"] == "2.6.6"
    assert sorted(p.relative_to(ours).as_posix() for p in ours.rglob("*")) == sorted(
        p.relative_to(theirs).as_posix() for p in theirs.rglob("*")
    )
    assert "Done." in capsys.readouterr().out


def test_the_backup_holds_the_original_and_a_second_run_keeps_it(tmp_path: Path) -> None:
    file = _write(tmp_path, "model.ckpt", "1.6.0-loops-without-batches-that-stepped")
    original = file.read_bytes()
    assert _run(str(file)) == 0
    assert (tmp_path / "model.bak").read_bytes() == original != file.read_bytes()
    assert _run(str(file)) == 0
    assert (tmp_path / "model.bak").read_bytes() == original  # never overwritten: it is the untouched original


def test_an_extension_without_its_dot_finds_the_files(tmp_path: Path) -> None:
    _write(tmp_path, "weights.pt", "1.6.0-loops-without-batches-that-stepped")
    assert _run(str(tmp_path), "-e", "pt") == 0
    assert torch.load(tmp_path / "weights.pt", weights_only=True)["legacy_pytorch-lightning_version"] == "1.6.0"


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_a_path_that_does_not_exist_exits_1_in_one_line_as_lightnings_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert _run(str(tmp_path / "missing.ckpt")) == 1
    assert "missing.ckpt does not exist" in _one_error_line(capsys)
    assert f"The path {tmp_path / 'missing.ckpt'} does not exist" in caplog.text  # logged, as Lightning's is


def test_a_folder_without_checkpoints_exits_1_naming_the_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(str(tmp_path)) == 1
    assert "No checkpoint files with extension .ckpt" in _one_error_line(capsys)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not a checkpoint\n", "cannot be read as a checkpoint: torch.save did not write it"),
        (b"\x80\x02truncated", "cannot be read as a checkpoint (truncated, corrupt"),
        (None, "is not a Lightning checkpoint: it holds a Tensor"),
        ({"state_dict": {}}, "it holds a dict without 'pytorch-lightning_version'"),
    ],
    ids=["text-file", "a-truncated-pickle", "a-tensor", "a-dict-without-a-version"],
)
def test_a_file_that_is_not_a_checkpoint_exits_2_naming_it(
    content: object, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "bad.ckpt"
    if isinstance(content, bytes):
        file.write_bytes(content)
    else:
        torch.save(torch.zeros(2) if content is None else content, file)
    assert _run(str(file)) == 2
    error = _one_error_line(capsys)
    assert says in error and "bad.ckpt" in error


def test_python_dash_m_at_lightnings_path_runs_the_program(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "accelplug.pytorch.utilities.upgrade_checkpoint", str(tmp_path / "missing.ckpt")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.strip().startswith("upgrade_checkpoint: error: The path")
