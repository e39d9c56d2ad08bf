"""Where ``self.log`` values wait: per stage, step values and running epoch reductions, on the device.

Nothing here reads a value back to the host; :mod:`accelplug.trainer.loops._readback` does that, in one go, at
logging steps and epoch ends. The table of hooks says what a value means where it is logged
(Lightning's rules): a step value by default in the training step and its per-batch hooks, an epoch
value in the evaluation steps and in every epoch hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ...errors import MisconfigurationException

if TYPE_CHECKING:
    from ...strategies.base import Strategy

__all__ = [
    "RULES",
    "LogCollector",
    "LogMeta",
    "is_metric",
    "is_metric_collection",
    "reduction_name",
    "settle_bar",
    "sync_step_value",
]

# (default on_step, default on_epoch, on_step allowed, on_epoch allowed) per hook.
_STEP = (True, False, True, True)
_EVAL_STEP = (False, True, True, True)
_EPOCH_ONLY = (False, True, False, True)
RULES: dict[str, tuple[bool, bool, bool, bool]] = {
    **dict.fromkeys(
        (
            "training_step",
            "on_train_batch_start",
            "on_train_batch_end",
            "on_before_backward",
            "backward",
            "on_after_backward",
            "on_before_optimizer_step",
            "optimizer_step",
            "configure_gradient_clipping",
            "on_before_zero_grad",
            "optimizer_zero_grad",
        ),
        _STEP,
    ),
    **dict.fromkeys(
        (
            "validation_step",
            "test_step",
            "on_validation_batch_start",
            "on_validation_batch_end",
            "on_test_batch_start",
            "on_test_batch_end",
        ),
        _EVAL_STEP,
    ),
    **dict.fromkeys(
        (
            "on_train_start",
            "on_train_epoch_start",
            "on_train_epoch_end",
            "on_validation_start",
            "on_validation_epoch_start",
            "on_validation_epoch_end",
            "on_test_start",
            "on_test_epoch_start",
            "on_test_epoch_end",
        ),
        _EPOCH_ONLY,
    ),
}
_REDUCTIONS = ("mean", "sum", "max", "min")
_BY_FUNCTION: tuple[tuple[object, str], ...] = (
    (torch.mean, "mean"),
    (torch.sum, "sum"),
    (sum, "sum"),
    (torch.max, "max"),
    (max, "max"),
    (torch.min, "min"),
    (min, "min"),
)


def is_metric(value: object) -> bool:
    """A torchmetrics ``Metric`` (recognised by its protocol, so torchmetrics is never imported here)."""
    return isinstance(value, torch.nn.Module) and all(
        callable(getattr(value, n, None)) for n in ("update", "compute", "reset")
    )


def is_metric_collection(value: object) -> bool:
    """A torchmetrics ``MetricCollection`` (a ``ModuleDict`` of metrics, not a ``Mapping``), told by its class name."""
    return isinstance(value, torch.nn.ModuleDict) and any(
        c.__name__ == "MetricCollection" and c.__module__.startswith("torchmetrics") for c in type(value).__mro__
    )


def reduction_name(reduce_fx: object) -> str:
    """The reduction ``reduce_fx`` names, as Lightning reads it: 'mean' (alias 'avg'), 'sum', 'max', 'min' in any
    case, or torch's or Python's function of that name; anything else (a custom reduction) is refused."""
    if isinstance(reduce_fx, str):
        name = reduce_fx.lower()
        name = "mean" if name == "avg" else name
        if name in _REDUCTIONS:
            return name
    else:
        for function, name in _BY_FUNCTION:
            if reduce_fx is function:
                return name
    raise MisconfigurationException(
        f"Only `self.log(..., reduce_fx={{min,max,mean,sum}})` are supported; got reduce_fx={reduce_fx!r}. Pass "
        "'mean' (or 'avg'), 'sum', 'max' or 'min' (or torch.mean/sum/max/min, or Python's sum/max/min); for a "
        "custom reduction log a torchmetrics.Metric instead."
    )


@dataclass(frozen=True)
class LogMeta:
    """How one logged value is treated: step and/or epoch value, reduction, where it is shown."""

    on_step: bool
    on_epoch: bool
    reduction: str
    prog_bar: bool
    logger: bool


@dataclass
class _EpochValue:
    """One name's running epoch reduction on the device."""

    reduction: str
    total: torch.Tensor | None = None
    weight: float = 0.0
    metric: Any = None
    prog_bar: bool = False
    logger: bool = True
    #: reduced across the processes at the epoch's end (``sync_dist=True`` without ``rank_zero_only``); else this
    #: process's own value, as Lightning keeps it (and no collective a rank that did not log it would miss)
    sync: bool = False

    def add(self, value: torch.Tensor, batch_size: int) -> None:
        value = value.detach().to(torch.float32)
        if self.total is None:
            self.total = value * batch_size if self.reduction == "mean" else value.clone()
        elif self.reduction == "mean":
            self.total = self.total + value * batch_size
        elif self.reduction == "sum":
            self.total = self.total + value
        elif self.reduction == "max":
            self.total = torch.maximum(self.total, value)
        else:
            self.total = torch.minimum(self.total, value)
        self.weight += batch_size


class LogCollector:
    """Everything ``self.log`` received during one stage (training, validation or test)."""

    def __init__(
        self,
        live: dict[str, Any] | None = None,
        bar: dict[str, Any] | None = None,
        logged: dict[str, Any] | None = None,
    ) -> None:
        #: Step values since they were last read, by logged name (``name`` or ``name_step``).
        self.step_values: dict[str, torch.Tensor] = {}
        #: The latest step values as ``callback_metrics`` shows them (``name`` and, when forked, ``name_step``):
        #: with ``live`` (training), the Trainer's ``callback_metrics`` itself, so a value is there as soon as it
        #: is logged (Lightning's are computed when read), a hook later in the same step included.
        self.callback_step: dict[str, Any] = live if live is not None else {}
        #: With ``bar``, the Trainer's ``progress_bar_metrics``: a ``prog_bar=True`` step value lands there as the
        #: device tensor it is (no read-back), and becomes a float only when someone reads the metrics
        #: (:func:`settle_bar`), as Lightning's progress bar shows each step's live value.
        self.bar = bar
        #: With ``logged``, the Trainer's ``logged_metrics``: a step value meant for the loggers lands there as the
        #: device tensor it is at once, logging step or not, as Lightning's ``logged_metrics`` shows each batch's.
        self.logged = logged
        #: Names logged both on step and on epoch (with their loader suffix): ``callback_metrics`` also shows them
        #: unsuffixed; each maps to its step and epoch keys.
        self.forked: dict[str, tuple[str, str]] = {}
        #: With several evaluation loaders, keys logged with ``add_dataloader_idx=False``: the loader whose result
        #: dict alone shows them (Lightning's rule).
        self.owners: dict[str, int] = {}
        self.step_prog_bar: set[str] = set()
        self.step_no_logger: set[str] = set()
        self.epoch_values: dict[str, _EpochValue] = {}
        #: How each (hook, name) was first logged: the same name logged in the same hook with other options is an error.
        self.metas: dict[tuple[str, str], LogMeta] = {}
        #: The loader that first logged each (hook, name) with ``add_dataloader_idx=False``: another loader logging
        #: the same bare name would mix two loaders' values into one, which Lightning refuses.
        self.bare_loaders: dict[tuple[str, str], int] = {}
        #: Metric objects computed for an epoch, reset once the epoch-end hooks have run (they may compute them).
        self._computed: list[Any] = []
        #: Metric objects logged on step only: reset at the epoch's end too (Lightning resets every logged metric).
        self._step_metrics: dict[int, Any] = {}

    def add(
        self,
        name: str,
        value: Any,
        meta: LogMeta,
        batch_size: int,
        suffix: str = "",
        owner: int | None = None,
        synced: torch.Tensor | None = None,
        sync: bool = False,
    ) -> None:
        """Record one ``self.log`` call (``meta``: how the value is to be treated; ``suffix``: the loader's
        ``/dataloader_idx_N``; ``owner``: the loader of a value logged with ``add_dataloader_idx=False``;
        ``synced``: the step value reduced across processes (``sync_dist=True``), the epoch reduction still
        taking this process's ``value``; ``sync``: the epoch value is reduced across processes too)."""
        on_step, on_epoch, prog_bar, logger = meta.on_step, meta.on_epoch, meta.prog_bar, meta.logger
        metric = value if is_metric(value) else None
        step_key = f"{name}_step{suffix}" if on_epoch else name + suffix
        epoch_key = f"{name}_epoch{suffix}" if on_step else name + suffix
        if on_step:
            if metric is not None and not on_epoch:
                self._step_metrics.setdefault(id(metric), metric)
            step_value = metric._forward_cache if metric is not None else value if synced is None else synced
            if isinstance(step_value, torch.Tensor):
                detached = step_value.detach()
                self.step_values[step_key] = self.callback_step[step_key] = self.callback_step[name + suffix] = detached
                if prog_bar:
                    self.step_prog_bar.add(step_key)
                    if self.bar is not None:
                        self.bar[step_key] = detached
                if not logger:
                    self.step_no_logger.add(step_key)
                elif self.logged is not None:
                    self.logged[step_key] = detached
        if on_epoch:
            if on_step:
                self.forked[name + suffix] = (step_key, epoch_key)
            if owner is not None:
                self.owners[epoch_key] = self.owners[name] = owner
            entry = self.epoch_values.get(epoch_key)
            if entry is None:
                entry = self.epoch_values[epoch_key] = _EpochValue(
                    meta.reduction, prog_bar=prog_bar, logger=logger, sync=sync
                )
            if metric is not None:
                entry.metric = metric
            else:
                entry.add(value, batch_size)

    def aliases(self, values: dict[str, Any]) -> dict[str, Any]:
        """``name`` for every ``name_epoch``/``name_step`` in ``values`` that was forked (for callback_metrics)."""
        found = {}
        for alias, (step_key, epoch_key) in self.forked.items():
            for key in (epoch_key, step_key):
                if key in values:
                    found[alias] = values[key]
        return found

    def drain_step(self) -> dict[str, torch.Tensor]:
        values, self.step_values = self.step_values, {}
        return values

    def finish_epoch(self, strategy: Strategy, device: torch.device, *, reset: bool = True) -> dict[str, torch.Tensor]:
        """Every epoch value reduced over the epoch and the processes, as CPU scalars; then cleared.

        Logged metric objects are reset only with ``reset`` (after the epoch-end hooks, as Lightning does), so a
        hook that calls ``self.val_acc.compute()`` still reads the epoch's value."""
        entries, self.epoch_values = self.epoch_values, {}
        results: dict[str, torch.Tensor] = {}
        plain = {k: e for k, e in entries.items() if e.metric is None and e.total is not None}
        synced = {k: e for k, e in plain.items() if e.sync}
        for reduction in _REDUCTIONS:
            names = sorted(k for k, e in synced.items() if e.reduction == reduction)
            if names:
                results.update(_reduce_group(names, synced, reduction, strategy, device))
        own = [k for k in plain if k not in synced]
        if own:  # this process's values (Lightning's sync_dist=False): one read-back for all of them
            locals_ = torch.stack([_own_value(plain[k]).to(device) for k in own]).cpu()
            results.update({k: locals_[i] for i, k in enumerate(own)})
        for key, entry in entries.items():
            if entry.metric is not None:
                results[key] = _computed(key, entry.metric).detach().to("cpu", torch.float32).reshape(())
                self._computed.append(entry.metric)
        if reset:
            computed, self._computed = self._computed, []
            stepped, self._step_metrics = self._step_metrics, {}
            for metric in {**stepped, **{id(m): m for m in computed}}.values():
                metric.reset()
        return results

    def prog_bar_names(self) -> set[str]:
        return set(self.step_prog_bar) | {k for k, e in self.epoch_values.items() if e.prog_bar}


def _computed(name: str, metric: Any) -> torch.Tensor:
    """The tensor a logged metric object's ``compute()`` returns; anything else is refused with the logged name."""
    value = metric.compute()
    if not isinstance(value, torch.Tensor):
        raise ValueError(
            f"The `.compute()` return of the metric logged as {name!r} must be a tensor: "
            f"{type(metric).__name__}.compute() returned {type(value).__name__}. Return one tensor from `compute()`, "
            "or log each value under its own name."
        )
    return value


def settle_bar(metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` with every device tensor the collector left there turned into a float, in place (keys keep
    their order), in one transfer: the read-back a progress bar pays for when it shows the live step values."""
    pending = [k for k, v in metrics.items() if isinstance(v, torch.Tensor)]
    if not pending:
        return metrics
    tensors = [metrics[k] for k in pending]
    device = tensors[0].device
    if all(t.device == device for t in tensors):
        floats = torch.stack([t.to(torch.float32).reshape(()) for t in tensors]).tolist()
    else:
        floats = [float(t) for t in tensors]
    metrics.update(zip(pending, floats, strict=True))
    return metrics


def sync_step_value(value: torch.Tensor, reduction: str, group: Any, device: torch.device) -> torch.Tensor:
    """A ``sync_dist=True`` step value reduced across the processes of ``group`` (all of them when None) with its
    ``reduce_fx``, on ``device`` (NCCL reduces device tensors only), as floating point; ``value`` when no process
    group is set up. Every process must log it: this is a collective, the cost Lightning warns of."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        return value
    reduced = value.detach().to(device=device, dtype=value.dtype if value.is_floating_point() else torch.float32)
    reduced = reduced.clone()
    op = {"max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}.get(reduction, dist.ReduceOp.SUM)
    dist.all_reduce(reduced, op=op, group=group)
    if reduction == "mean":
        reduced = reduced / dist.get_world_size(group)
    return reduced


def _own_value(entry: _EpochValue) -> torch.Tensor:
    """One process's epoch value: the batch-size-weighted mean, or the running sum/max/min as it stands."""
    total = entry.total.reshape(())  # type: ignore[union-attr]
    return total / entry.weight if entry.reduction == "mean" else total


def _reduce_group(
    names: list[str], entries: dict[str, _EpochValue], reduction: str, strategy: Strategy, device: torch.device
) -> dict[str, torch.Tensor]:
    totals = torch.stack([entries[n].total.to(device).reshape(()) for n in names])  # type: ignore[union-attr]
    if reduction == "mean":
        weights = torch.tensor([entries[n].weight for n in names], device=device, dtype=torch.float32)
        totals = strategy.reduce_sum(totals) / strategy.reduce_sum(weights)
    elif reduction == "sum":
        totals = strategy.reduce_sum(totals)
    else:  # max/min: the mean of per-process extremes would be wrong; reduce with the right op
        totals = _reduce_extreme(totals, reduction, strategy)
    values = totals.cpu()
    return {n: values[i] for i, n in enumerate(names)}


def _reduce_extreme(values: torch.Tensor, reduction: str, strategy: Strategy) -> torch.Tensor:
    import torch.distributed as dist

    if not strategy.is_distributed or not dist.is_initialized():
        return values
    reduced = values.clone()
    dist.all_reduce(reduced, op=dist.ReduceOp.MAX if reduction == "max" else dist.ReduceOp.MIN)
    return reduced
