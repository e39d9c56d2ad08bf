"""One training run of pytorch-forecasting's own LightningModules, under Lightning or under accelplug.

``python forecasting_run.py lightning|accelplug MODEL`` prints one JSON line: the metrics of ``fit`` (Lightning's
``trainer.callback_metrics``), the sum of ``model.predict``'s output, the epoch and step counts and the module the
Trainer came from. ``accelplug`` turns the Lightning redirect on first (:mod:`accelplug.interop`), so the library's
``import lightning.pytorch`` — its ``BaseModel(LightningModule)`` classes, its ``Trainer`` calls inside
``predict`` — runs on accelplug without a line of the library changed.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

FRAMEWORK, MODEL = sys.argv[1], sys.argv[2]
if FRAMEWORK == "accelplug":
    from accelplug.interop import use_accelplug_for_lightning

    use_accelplug_for_lightning()

import lightning.pytorch as pl  # noqa: E402
from pytorch_forecasting import DeepAR, NBeats, TimeSeriesDataSet  # noqa: E402
from pytorch_forecasting.data.examples import generate_ar_data  # noqa: E402
from pytorch_forecasting.metrics import NormalDistributionLoss  # noqa: E402

warnings.simplefilter("ignore")  # the library's and Lightning's advice lines are not what is compared


def run(kind: str) -> dict[str, Any]:
    data = generate_ar_data(seasonality=10.0, timesteps=120, n_series=20, seed=42)
    data["static"] = "2"
    data["date"] = 0
    cutoff = data["time_idx"].max() - 20
    dataset = TimeSeriesDataSet(
        data[lambda frame: frame.time_idx <= cutoff],
        time_idx="time_idx",
        target="value",
        group_ids=["series"],
        time_varying_unknown_reals=["value"],
        max_encoder_length=30,
        max_prediction_length=10,
    )
    validation = TimeSeriesDataSet.from_dataset(dataset, data, min_prediction_idx=cutoff + 1)
    pl.seed_everything(0)
    train_loader = dataset.to_dataloader(train=True, batch_size=32, num_workers=0)
    val_loader = validation.to_dataloader(train=False, batch_size=64, num_workers=0)
    if kind == "nbeats":
        model = NBeats.from_dataset(dataset, learning_rate=3e-2, widths=[32, 128], backcast_loss_ratio=0.1)
    else:
        model = DeepAR.from_dataset(
            dataset, learning_rate=3e-2, hidden_size=16, rnn_layers=2, loss=NormalDistributionLoss()
        )
    trainer = pl.Trainer(
        max_epochs=3,
        accelerator="cpu",
        devices=1,
        limit_train_batches=15,
        gradient_clip_val=0.1,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        enable_checkpointing=False,
        deterministic=True,
    )
    trainer.fit(model, train_loader, val_loader)
    prediction = model.predict(
        val_loader, trainer_kwargs={"accelerator": "cpu", "logger": False, "enable_progress_bar": False}
    )
    return {
        "metrics": {name: float(value) for name, value in trainer.callback_metrics.items()},
        "prediction_sum": float(prediction.sum()),
        "prediction_shape": list(prediction.shape),
        "epoch": trainer.current_epoch,
        "step": trainer.global_step,
        "trainer_module": type(trainer).__module__,
    }


print(json.dumps(run(MODEL)))
