"""The examples run as documented."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.processes import REPO, child_env


def _write_two_class_folder(root: Path) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for name, channel in (("red", 0), ("blue", 2)):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(12):
            pixels = rng.integers(0, 60, size=(20, 20, 3), dtype=np.uint8)
            pixels[..., channel] = rng.integers(180, 255, size=(20, 20), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"{i}.png")


@pytest.mark.slow
def test_image_folder_classifier_learns_a_folder_of_class_subfolders(tmp_path: Path) -> None:
    data = tmp_path / "images"
    _write_two_class_folder(data)
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "image_folder_classifier.py"), "--data_dir", str(data),
         "--accelerator", "cpu", "--max-epochs", "12", "--image-size", "16", "--batch-size", "8",
         "--root-dir", str(tmp_path)],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    match = re.search(r"24 images, classes \['blue', 'red'\]: validation accuracy ([0-9.]+)", result.stdout)
    assert match, result.stdout
    assert float(match.group(1)) == 1.0
