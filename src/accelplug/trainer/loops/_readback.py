"""Turning logged values into ``callback_metrics``, logger rows and progress-bar values.

The only place values cross from the device to the host: at a logging step (every
``log_every_n_steps`` optimizer steps) and at an epoch's end, every pending value is stacked, averaged
across processes in one collective, and read back in one transfer. Between those points
``callback_metrics`` holds the latest step values as device tensors (no synchronisation), as Lightning's
does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .._run import Run
    from ..logging.collector import LogCollector
    from ..state import LoopState

__all__ = [
    "epoch_line",
    "finish_eval_epoch",
    "finish_train_epoch",
    "latest_loss",
    "log_row",
    "log_train_row",
    "output_scalars",
    "read_step_metrics",
    "reduce_to_floats",
    "returns_metrics",
]


def returns_metrics(module: object) -> bool:
    """Whether the scalars a step returns are metrics: for a plain ``torch.nn.Module`` (accelplug's own module
    protocol, which Lightning cannot run) they are; a ``LightningModule`` logs only what ``self.log`` records, as
    in Lightning, so a Lightning project's metrics and logger rows hold nothing more under accelplug."""
    from ...core.module import LightningModule

    return not isinstance(module, LightningModule)


def output_scalars(output: Any, loss_name: str) -> dict[str, torch.Tensor]:
    """Scalar values a step returned: the loss under ``loss_name``, other dict entries as named."""
    if isinstance(output, torch.Tensor):
        return {loss_name: output.detach()} if output.numel() == 1 else {}
    found: dict[str, torch.Tensor] = {}
    if isinstance(output, dict):
        for key, value in output.items():
            name = loss_name if key == "loss" else str(key)
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                found[name] = value.detach().reshape(())
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = torch.tensor(float(value))
    return found


def reduce_to_floats(
    run: Run, values: dict[str, torch.Tensor], own: dict[str, torch.Tensor] | None = None
) -> dict[str, float]:
    """``values`` averaged across processes (every process has each of them) and ``own`` as this process holds
    them (``self.log`` step values: already reduced at the call where ``sync_dist=True``, else the process's own,
    as Lightning keeps them; a name one rank logs and another does not must join no collective), read back with
    one host-device sync."""
    mine = {k: v for k, v in (own or {}).items() if k not in values}
    shared_names, own_names = sorted(values), sorted(mine)
    parts = []
    if shared_names:
        parts.append(run.strategy.reduce_mean(_stacked(run, values, shared_names)))
    if own_names:
        parts.append(_stacked(run, mine, own_names))
    if not parts:
        return {}
    floats = (parts[0] if len(parts) == 1 else torch.cat(parts)).tolist()
    return dict(zip(shared_names + own_names, floats, strict=True))


def _stacked(run: Run, values: dict[str, torch.Tensor], names: list[str]) -> torch.Tensor:
    return torch.stack([values[n].to(device=run.device, dtype=torch.float32).reshape(()) for n in names])


def _publish(
    run: Run,
    values: dict[str, float],
    collector: LogCollector,
    no_logger: set[str],
    prog_bar: set[str],
    not_callback: frozenset[str] = frozenset(),
    *,
    step_back: int = 0,
    loggers: bool = True,
    row: dict[str, float] | None = None,
) -> None:
    """``callback_metrics`` (with unsuffixed aliases of forked names), the progress bar, and (with ``loggers``)
    the loggers (the row's step: Lightning's count of batches that stepped, ``step_back`` fewer); with ``row``,
    the loggers' values are added to it instead, for one row written later (``logged_metrics`` has them at once)."""
    state = run.state
    shown = {**values, **collector.aliases(values)}
    state.callback_metrics.update({k: torch.tensor(v) for k, v in shown.items() if k not in not_callback})
    state.progress_bar_metrics.update({k: v for k, v in values.items() if k in prog_bar})
    logged = {k: v for k, v in values.items() if k not in no_logger}
    if row is not None and loggers:
        row.update(logged)
        # the row is written after the epoch-end hooks, but they read trainer.logged_metrics with the epoch's values
        # in it already, as Lightning's (it computes them when read)
        state.logged_metrics.update({k: torch.tensor(v) for k, v in logged.items()})
    elif logged and loggers:
        run.log_metrics(logged, state.log_step - step_back, epoch=state.epoch)


def read_step_metrics(
    run: Run,
    collector: LogCollector,
    output: Any,
    private: dict[str, torch.Tensor] | None = None,
) -> dict[str, float]:
    """At a logging step: the step values and the loss, reduced, published and returned as floats.

    ``private`` values (the ranks' stop flags) ride on the same all-reduce: returned, never published. For a
    ``LightningModule`` (:func:`returns_metrics`) the returned loss is read back as ``train_loss`` for accelplug's
    display and the non-finite check only, and nothing else the step returned is.
    """
    pending = collector.drain_step()
    prog_bar, no_logger = set(collector.step_prog_bar), set(collector.step_no_logger)
    returned = output_scalars(output, "train_loss")
    if not returns_metrics(run.module):  # the loss alone, read back like the private values: returned, never published
        loss = returned.get("train_loss")
        returned = {}
        if loss is not None and "train_loss" not in pending:
            private = {"train_loss": loss, **(private or {})}
    shared = {k: v for k, v in returned.items() if k not in pending}  # what self.log recorded wins, as before
    values = reduce_to_floats(run, {**shared, **(private or {})}, pending)
    public = {k: v for k, v in values.items() if k not in private} if private else values
    # A plain module's returned loss goes to the loggers (and accelplug's own display, through the value
    # returned); the progress-bar metrics and callback_metrics hold only what self.log recorded, as Lightning's.
    automatic = frozenset() if "train_loss" in pending else frozenset({"train_loss"})
    # log_every_n_steps=0 (Lightning: no step is logged): the loop still reads back at its default cadence, for
    # the progress bar, the non-finite check and the ranks' stop flags, but the loggers get no step row
    to_loggers = run.options.log_every_n_steps != 0 or bool(run.options.fast_dev_run)
    _publish(run, public, collector, no_logger, prog_bar, automatic, loggers=to_loggers)
    return values


def finish_train_epoch(
    run: Run, collector: LogCollector, *, reset: bool = True, row: dict[str, float] | None = None
) -> dict[str, float]:
    """Epoch values logged during training (or its epoch hooks): reduced, published, returned (logged metric
    objects reset only with ``reset``: after the epoch-end hooks). With ``row`` the loggers' values are gathered
    there, for the epoch's one row (:func:`log_train_row`), as Lightning writes the values of the epoch and of its
    ``on_train_epoch_end`` hooks together."""
    prog_bar = collector.prog_bar_names()
    no_logger = {k for k, e in collector.epoch_values.items() if not e.logger}
    values = {k: float(v) for k, v in collector.finish_epoch(run.strategy, run.device, reset=reset).items()}
    if values:  # Lightning logs a training epoch's row at the step of its last batch, one less than the count
        _publish(run, values, collector, no_logger, prog_bar, step_back=1, row=row)
    return values


def log_train_row(run: Run, row: dict[str, float]) -> None:
    """A training epoch's one logger row, at the step of its last batch (one less than the count)."""
    if row:
        run.log_metrics(row, run.state.log_step - 1, epoch=run.state.epoch)


def finish_eval_epoch(
    run: Run,
    collector: LogCollector,
    returned: dict[str, torch.Tensor],
    counts: dict[str, int],
    *,
    publish: bool,
    reset: bool = True,
    row: dict[str, float] | None = None,
) -> dict[str, float]:
    """An evaluation epoch's metrics: the mean of each returned scalar, and every ``self.log`` epoch value.

    Without ``publish`` (the sanity check) they reach ``callback_metrics`` and the progress bar, where the
    ``on_validation_end`` hooks see them as in Lightning, but no logger; the sanity check puts the metrics back
    afterwards. With ``row`` the loggers' values are gathered there (:func:`log_row` writes them)."""
    prog_bar = collector.prog_bar_names()
    no_logger = {k for k, e in collector.epoch_values.items() if not e.logger}
    means = {name: total / counts[name] for name, total in returned.items()}
    values = reduce_to_floats(run, means)
    values.update({k: float(v) for k, v in collector.finish_epoch(run.strategy, run.device, reset=reset).items()})
    if values:
        _publish(run, values, collector, no_logger, prog_bar, loggers=publish, row=row)
    return values


def log_row(run: Run, row: dict[str, float]) -> None:
    """An evaluation epoch's one logger row: what its steps and its epoch-end hooks logged (Lightning writes one)."""
    if row:
        run.log_metrics(row, run.state.log_step, epoch=run.state.epoch)


def latest_loss(run: Run, output: Any, fallback: float | None) -> float | None:
    """The loss of the epoch's last step, so the epoch's line never shows a value from steps ago.

    One read-back per epoch (averaged across processes), for accelplug's own display; the progress-bar
    metrics (Lightning's) never show the returned loss.
    """
    found = output_scalars(output, "train_loss").get("train_loss") if output is not None else None
    # Every process takes part in the average (NaN where its last batch had no loss), so a skipped
    # batch on one rank cannot leave the others waiting in the collective.
    mine = found if found is not None else torch.tensor(float("nan"))
    loss = reduce_to_floats(run, {"train_loss": mine})["train_loss"]
    return fallback if loss != loss else loss


def epoch_line(state: LoopState, last_loss: float | None) -> dict[str, float]:
    """What an epoch's progress line shows: ``callback_metrics``, and the returned loss (not one of them,
    as in Lightning, but worth seeing)."""
    shown = {k: float(v) for k, v in state.callback_metrics.items()}
    if last_loss is not None:
        shown.setdefault("train_loss", last_loss)
    return shown
