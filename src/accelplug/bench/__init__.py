"""The engine behind ``accelplug bench``: the PyTorch MPS launch post's experiment, through the Trainer.

``models`` builds the workloads (ResNet50, BERT-base, VGG16 with random weights, and a tiny CNN and
a tiny BERT-like encoder that need nothing extra); ``loops`` runs them through ``Trainer.fit`` and
``Trainer.validate`` (and, beside them, a hand-written loop); ``timing`` is the callback that times
the steady-state steps; ``runner`` runs every accelerator, model, phase and round; ``report`` holds
the JSON shape with the spread and the speed-ups; ``table`` and ``chart`` present them. The CLI only
parses options and writes files, so all of it can be used from Python as well.
"""

from __future__ import annotations

__all__ = ["BenchConfig", "BenchReport", "run_bench"]

from .report import BenchReport
from .runner import BenchConfig, run_bench
