"""One fixed sequence of logger calls, played against Lightning's logger and ours for each tracker.

It is what a short fit sends: hyper-parameters once, metrics at training steps (with ``epoch``, as the
Trainer adds it), three validation checkpoints into a top-2 ``ModelCheckpoint`` with ``last.ckpt`` (the
first one later pushed out of the top 2 and deleted), then ``finalize``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .checkpoints import ModelCheckpoint

HYPERPARAMS: dict[str, Any] = {
    "lr": 0.01,
    "batch_size": 32,
    "optimizer": {"name": "adam", "betas": [0.9, 0.99]},
    "layers": [{"width": 8}, {"width": 4}],
    "activation": torch.nn.ReLU,
    "dropout": None,
    "long_text": "x" * 300,
}

#: (step, metrics) in the order they are logged.
METRICS: list[tuple[int, dict[str, float]]] = [
    (5, {"train_loss": 1.0, "epoch": 0}),
    (10, {"train_loss": 0.5, "val_loss": 0.8, "epoch": 0}),
    (20, {"train_loss": 0.25, "val_loss": 0.6, "epoch": 1}),
    (30, {"train_loss": 0.125, "val_loss": 0.7, "epoch": 2}),
]

#: (epoch, step, score) of each validation checkpoint, saved after the metrics of that step.
SAVES = [(0, 10, 0.8), (1, 20, 0.6), (2, 30, 0.7)]


def play(logger: Any, dirpath: Path, *, status: str = "success", save_top_k: int = 2) -> ModelCheckpoint:
    callback = ModelCheckpoint(dirpath, save_top_k=save_top_k)
    logger.log_hyperparams(HYPERPARAMS)
    saves = {step: (epoch, score) for epoch, step, score in SAVES}
    for step, metrics in METRICS:
        logger.log_metrics(metrics, step=step)
        if step in saves:
            epoch, score = saves[step]
            callback.save(logger, epoch=epoch, step=step, score=score)
    logger.finalize(status)
    return callback
