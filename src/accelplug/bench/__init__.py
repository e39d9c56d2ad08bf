"""The engine behind ``accelplug bench``: the PyTorch MPS launch post's experiment on any machine.

``models`` builds the workloads (ResNet50, BERT-base, VGG16 with random weights, and a tiny CNN that
needs nothing extra), ``runner`` times training and evaluation steps on each accelerator and the CPU,
``report`` holds the JSON shape with the speed-ups, ``chart`` draws them. The CLI only parses options
and prints; everything measured lives here so it can be used from Python as well.
"""

from __future__ import annotations

__all__ = ["BenchConfig", "BenchReport", "run_bench"]

from .report import BenchReport
from .runner import BenchConfig, run_bench
