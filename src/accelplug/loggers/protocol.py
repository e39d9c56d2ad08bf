"""The logger calls the Trainer makes, at Lightning 2.6's points and in its order, and what counts as a logger.

A logger is anything with ``log_metrics(metrics, step)`` (:func:`is_logger`): a subclass of
:class:`~accelplug.loggers.Logger`, a Lightning logger, or a hand-written object; the rest of the protocol is
called where present. The Trainer makes these calls on every process, as Lightning does (all but
``after_save_checkpoint``); a logger that must write once decorates its methods with ``rank_zero_only``, as the
built-in ones do, and one that records every rank (a per-process file, say) leaves them plain.

- ``Trainer()``: the loggers are made (:func:`trainer_loggers`), so ``trainer.logger._log_graph = True``
  works before ``fit``;
- every stage, before the ``setup`` hooks: each logger's ``experiment`` is made (:func:`start_experiments`);
- every stage, after ``on_fit_start`` (fit) or once the model is set up: ``log_hyperparams`` (the module's
  and the datamodule's hyper-parameters merged), ``log_graph(module)`` and ``save()``, logger by logger
  (:func:`log_run_start`);
- after each checkpoint a ``ModelCheckpoint`` writes: ``after_save_checkpoint(callback)`` on global rank 0
  (:func:`after_checkpoint_saved`);
- when the stage ends: ``finalize("success")``, or ``finalize("failed")`` when it raised (a signal, Ctrl+C
  and an error alike, as in Lightning) (:func:`finalize_loggers`).

A logger that raises is named: :class:`LoggerFailed` says which logger and which call, with the
logger's own exception chained, instead of a traceback that starts deep inside the loop.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import MisconfigurationException

__all__ = [
    "HyperparameterClashError",
    "LoggerFailed",
    "after_checkpoint_saved",
    "finalize_loggers",
    "is_logger",
    "log_run_start",
    "start_experiments",
    "trainer_loggers",
]


class LoggerFailed(RuntimeError):
    """A logger raised in one of the calls the Trainer makes on it; the logger's own error is ``__cause__``."""


def _call(logger: Any, method: str, *args: Any) -> None:
    function = getattr(logger, method, None)
    if not callable(function):
        return  # a plain object with log_metrics only: the rest of the protocol is optional
    try:
        function(*args)
    except Exception as exc:
        raise LoggerFailed(
            f"The logger {type(logger).__name__} raised in {method}(): {type(exc).__name__}: {exc}"
        ) from exc


def trainer_loggers(spec: Any, default_root_dir: str | os.PathLike[str]) -> list[Any]:
    """The loggers ``Trainer(logger=spec)`` starts with, made as Lightning makes them in ``Trainer()``.

    ``True`` (the default): a ``TensorBoardLogger`` in ``default_root_dir/lightning_logs`` when tensorboard
    or tensorboardX is installed (in a Slurm batch job, version = the job id), else a ``CSVLogger`` there.
    ``"csv"`` and ``"tensorboard"`` are accelplug's short forms (a CSV logger; a CSV and a TensorBoard
    logger sharing one version folder).
    """
    if spec is False or spec is None:
        return []
    # each logger's module is imported only where that logger is made: a Trainer loads the one it makes
    if spec is True:
        from .tensorboard import TensorBoardLogger, tensorboard_available

        if tensorboard_available():  # a Slurm job's runs are named by its job id, as in Lightning
            return [TensorBoardLogger(save_dir=default_root_dir, version=_slurm_job_id())]
    if spec is True or spec == "csv":
        from .csv_logs import CSVLogger

        return [CSVLogger(save_dir=default_root_dir)]
    if spec == "tensorboard":
        from .csv_logs import CSVLogger
        from .tensorboard import TensorBoardLogger

        csv_logger = CSVLogger(save_dir=default_root_dir)
        return [csv_logger, TensorBoardLogger(save_dir=default_root_dir, version=csv_logger.version)]
    return list(spec)


class HyperparameterClashError(MisconfigurationException, RuntimeError):
    """The module and the datamodule saved one hyper-parameter name with different values: a configuration
    error, and the ``RuntimeError`` Lightning raises, so either ``except`` catches it."""


def hyperparameters(module: Any, datamodule: Any) -> dict[str, Any] | None:
    """What ``log_hyperparams`` receives: the module's saved hyper-parameters and the datamodule's, merged.

    None when neither asked to be logged (``save_hyperparameters(logger=False)``, or never called). A key
    both hold with different values is an error naming the keys, as in Lightning.
    """
    from_module = bool(getattr(module, "_log_hyperparams", False))
    from_data = datamodule is not None and bool(
        getattr(datamodule, "_log_hyperparams", bool(getattr(datamodule, "hparams", None)))
    )
    module_params = dict(getattr(module, "hparams_initial", {}) or {}) if from_module else {}
    data_params = dict(_initial(datamodule)) if from_data else {}
    if not from_module and not from_data:
        return None
    clashing = [
        key
        for key in module_params
        if key in data_params and key != "_class_path" and not _same(module_params[key], data_params[key])
    ]
    if clashing:
        raise HyperparameterClashError(
            f"Error while merging hparams: the keys {clashing} are present in both the LightningModule's and "
            "LightningDataModule's hparams but have different values, so the loggers cannot be given one value. "
            "Rename one of them, or pass save_hyperparameters(logger=False) on one side."
        )
    merged = {**module_params, **data_params}
    return {key: value for key, value in merged.items() if key != "_class_path"}


def _initial(datamodule: Any) -> Any:
    initial = getattr(datamodule, "hparams_initial", None)
    return initial if initial is not None else getattr(datamodule, "hparams", {}) or {}


def _same(a: Any, b: Any) -> bool:
    import torch

    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a is b
    try:
        return bool(a == b)
    except Exception:
        return a is b


def start_experiments(loggers: Sequence[Any]) -> None:
    """Make every logger's ``experiment`` before the ``setup`` hooks run, as Lightning does in every stage.

    A logger's run folder, version and event file then exist from the start of the call, even when
    nothing is ever logged (an empty TensorBoard event file, a CSV run folder), and ``setup`` hooks can
    read the experiment's metadata. W&B's experiment comes first: ``wandb.init`` must precede any
    TensorBoard writer for W&B to sync TensorBoard's events. The class is told by name, so Lightning's own
    ``WandbLogger`` passed in a list is ordered the same way.
    """
    ordered = sorted(loggers, key=lambda logger: not any(c.__name__ == "WandbLogger" for c in type(logger).__mro__))
    for logger in ordered:
        try:
            getattr(logger, "experiment", None)
        except Exception as exc:
            raise LoggerFailed(
                f"The logger {type(logger).__name__} raised making its experiment: {type(exc).__name__}: {exc}"
            ) from exc


def log_run_start(loggers: Sequence[Any], module: Any, datamodule: Any) -> None:
    """Hyper-parameters, the graph and a save, logger by logger (Lightning's ``_log_hyperparams``)."""
    if not loggers:
        return
    params = hyperparameters(module, datamodule)
    for logger in loggers:
        if params is not None:
            _call(logger, "log_hyperparams", params)
        _call(logger, "log_graph", module)
        _call(logger, "save")


def after_checkpoint_saved(loggers: Iterable[Any], checkpoint_callback: Any) -> None:
    """Tell every logger that ``checkpoint_callback`` wrote a checkpoint (trackers upload it here)."""
    for logger in loggers:
        _call(logger, "after_save_checkpoint", checkpoint_callback)


def finalize_loggers(loggers: Iterable[Any], *, failed: BaseException | None) -> None:
    """``finalize("success")``, or ``finalize("failed")`` after an exception.

    After a failure the run's own exception is what the user must see: a logger that also fails to
    finalize is reported as a warning instead of replacing it.
    """
    status = "success" if failed is None else "failed"
    for logger in loggers:
        if failed is None:
            _call(logger, "finalize", status)
            continue
        try:
            _call(logger, "finalize", status)
        except LoggerFailed as exc:
            warnings.warn(f"{exc} (while the run was ending after {type(failed).__name__})", stacklevel=2)


def is_logger(obj: object) -> bool:
    """Whether ``obj`` follows the logger protocol (at least ``log_metrics``)."""
    return callable(getattr(obj, "log_metrics", None))


def _slurm_job_id() -> int | None:
    """The Slurm job's id, where there is a job (outside one, the Slurm environment's module is not loaded)."""
    if "SLURM_JOB_ID" not in os.environ:
        return None
    from ..environments.slurm import SLURMEnvironment

    return SLURMEnvironment.job_id()
