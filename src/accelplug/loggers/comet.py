"""``CometLogger``: parameters, metrics, the model graph and checkpoints to Comet, online or offline.

``pip install "accelplug[comet]"``. Arguments and behaviour as Lightning 2.6's ``CometLogger`` (keyword
only; Lightning's older names ``experiment_name``, ``project_name``, ``offline``, ``save_dir`` still work,
with a warning), through ``comet_ml.start``. Nested hyper-parameters are flattened by Comet
(``optim|lr``); an ``epoch`` entry in the metrics becomes Comet's epoch rather than a metric; ``prefix``
is joined to metric names by Comet with ``_``.

Three things differ from Lightning 2.6, on purpose:

- ``online=False`` records an offline experiment (an archive in ``offline_directory`` that
  ``comet upload`` sends later), as Lightning documents; Lightning 2.6 passes ``disabled=True`` to Comet
  with it and records nothing at all.
- the deprecated ``offline=True`` means offline (Lightning 2.6 turns it into ``online=True``).
- ``log_model`` (not in Lightning's CometLogger) uploads the ``ModelCheckpoint``'s files as a Comet model,
  with the metadata and aliases the W&B and MLflow loggers send; default False, as Lightning.

The experiment starts on first use, on rank 0 only. It stays open after a successful ``finalize`` (only
flushed, as in Lightning) so ``trainer.test`` after ``trainer.fit`` logs into it; it ends at process exit
or on ``logger.experiment.end()``, which is also when an offline archive is written. A failed or
interrupted run is ended at once, so its archive is complete even if the process lives on.
"""

from __future__ import annotations

import inspect
import logging
import os
from argparse import Namespace
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import torch

from ..errors import MisconfigurationException, did_you_mean
from . import _checkpoint_upload as uploads
from ._params import as_dict
from ._requirements import import_tracker, require_tracker
from .logger import Logger, global_rank, rank_zero_experiment, rank_zero_only

__all__ = ["FRAMEWORK_NAME", "CometLogger", "comet_experiment"]

#: What ``CometLogger.experiment`` is: a comet_ml ``Experiment``, ``ExistingExperiment`` or ``OfflineExperiment``
#: (comet_ml is imported only when a logger is built, so the alias names no class of it).
comet_experiment: TypeAlias = Any

log = logging.getLogger(__name__)

#: Recorded as the experiment's "Created from".
FRAMEWORK_NAME = "accelplug"

_MODES = ("get_or_create", "get", "create")

#: Lightning's older argument names: (old, new). ``offline=True`` means ``online=False`` (Lightning 2.6
#: copies the value unchanged, so its ``offline=True`` sends the run to the server).
_RENAMED = (
    ("experiment_name", "name"),
    ("project_name", "project"),
    ("offline", "online"),
    ("save_dir", "offline_directory"),
)


def _comet() -> Any:
    # Comet's auto-logging patches torch when comet_ml is imported after it; Lightning switches it off
    # and so do we, unless the user chose otherwise.
    os.environ.setdefault("COMET_DISABLE_AUTO_LOGGING", "1")
    return import_tracker("CometLogger", "comet_ml", "comet-ml", "comet")


class CometLogger(Logger):
    """Log to Comet (``comet_ml``); arguments and behaviour as Lightning 2.6's ``CometLogger``.

    Args:
        api_key: Comet API key (better: ``comet login`` or ``COMET_API_KEY``).
        workspace: Comet workspace (default: the account's).
        project: Comet project (default ``"Uncategorized"``).
        experiment_key: key of the experiment to create or continue (32 to 50 letters and digits).
        mode: ``"get_or_create"``, ``"get"`` (continue ``experiment_key``) or ``"create"``.
        online: True to send to Comet's server, False for an offline archive, None for Comet's setting.
        prefix: put in front of metric names (Comet joins it with ``_``).
        log_model: accelplug's addition: False, True (checkpoints when training ends; as written when
            ``save_top_k=-1``) or ``"all"`` (every checkpoint as it is written).
        **kwargs: ``comet_ml.ExperimentConfig`` options (``name``, ``offline_directory``, ``tags``, ...).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        workspace: str | None = None,
        project: str | None = None,
        experiment_key: str | None = None,
        mode: Literal["get_or_create", "get", "create"] | None = None,
        online: bool | None = None,
        prefix: str | None = None,
        log_model: Literal["all"] | bool = False,
        **kwargs: Any,
    ) -> None:
        require_tracker("CometLogger", "comet_ml", "comet-ml", "comet", "3.44.4")
        if mode is not None and mode not in _MODES:
            raise MisconfigurationException(
                f"CometLogger(mode={mode!r}) is invalid: use one of {', '.join(repr(m) for m in _MODES)} or None."
                + did_you_mean(mode, _MODES)
            )
        if log_model not in (True, False, "all"):
            raise MisconfigurationException(
                f"CometLogger(log_model={log_model!r}) is invalid: use False, True or 'all'."
                + did_you_mean(log_model, ["all"])
            )
        for old, new in _RENAMED:
            if old not in kwargs:
                continue
            value = kwargs.pop(old)
            log.warning("CometLogger(%s=...) is deprecated; use %s=... instead.", old, new)
            if new == "project":
                project = project if project is not None else value
            elif new == "online":
                online = online if online is not None else not value
            else:
                kwargs.setdefault(new, value)
        self._api_key = api_key
        self._workspace = workspace
        self._mode = mode
        self._online = online
        self._project_name = project
        self._experiment_key = experiment_key
        self._prefix = prefix
        self._log_model = log_model
        self._experiment: Any = None
        self._uploaded: dict[str, float] = {}
        self._waiting_callbacks: dict[int, Any] = {}
        self._kwargs = kwargs
        comet_ml = _comet()
        accepted = [name for name in inspect.signature(comet_ml.ExperimentConfig).parameters if name != "self"]
        unknown = [name for name in kwargs if name not in accepted]
        if unknown:
            raise MisconfigurationException(
                f"CometLogger got {unknown[0]}=..., which neither it nor comet_ml.ExperimentConfig accepts."
                f"{did_you_mean(unknown[0], accepted)} Accepted: {', '.join(accepted)}."
            )
        self._comet_config = comet_ml.ExperimentConfig(**kwargs)

    def _create_experiment(self) -> Any:
        comet_ml = _comet()
        experiment = comet_ml.start(
            api_key=self._api_key,
            workspace=self._workspace,
            project=self._project_name,
            experiment_key=self._experiment_key,
            mode=self._mode,
            online=self._online,
            experiment_config=self._comet_config,
        )
        if experiment is None:
            raise comet_ml.exceptions.ExperimentNotFound("comet_ml.start() returned no experiment.")
        self._experiment_key = experiment.get_key()
        self._project_name = experiment.project_name
        experiment.log_other("Created from", FRAMEWORK_NAME)
        return experiment

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The Comet experiment (``Experiment`` or ``OfflineExperiment``), started on first use on rank 0."""
        if self._experiment is None:
            self._experiment = self._create_experiment()
        return self._experiment

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        """Record parameters; Comet flattens nested ones to ``outer|inner``."""
        self.experiment.log_parameters(as_dict(params), nested_support=True)

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Record metrics at ``step``; an ``epoch`` entry is passed as Comet's epoch, not as a metric."""
        values = {
            key: value.detach().cpu() if isinstance(value, torch.Tensor) else value for key, value in metrics.items()
        }
        epoch = values.pop("epoch", None)
        self.experiment.log_metrics(values, step=step, epoch=epoch, prefix=self._prefix)

    def log_graph(self, model: torch.nn.Module, input_array: torch.Tensor | None = None) -> None:
        """Record the model's structure as the experiment's graph (only once a run exists, as Lightning)."""
        if self._experiment is not None:
            self._experiment.set_model_graph(model)

    @rank_zero_only
    def finalize(self, status: str) -> None:
        """Upload checkpoints ``log_model=True`` waited for and flush (on success); end a failed or interrupted run."""
        if self._experiment is None:
            return  # a process that never logged (another rank, or a spawn parent) has nothing to send
        if status == "success":
            for callback in self._waiting_callbacks.values():
                self._upload_checkpoints(callback)
            self._experiment.flush()
        elif status in ("failed", "interrupted"):
            experiment, self._experiment = self._experiment, None
            experiment.end()
        else:
            self._experiment.flush()

    @property
    def save_dir(self) -> str | None:
        """The offline archive folder (Comet's setting when not given)."""
        folder = self._comet_config.offline_directory
        return None if folder is None else str(folder)

    @property
    def name(self) -> str | None:
        """The Comet project."""
        return self._project_name

    @property
    def version(self) -> str | None:
        """The experiment key (the one asked for until a run exists; asking starts none)."""
        if self._experiment is not None:
            return str(self._experiment.get_key())
        return self._experiment_key

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the live experiment; the copy continues the same one by its key."""
        state = self.__dict__.copy()
        if self._experiment is not None:
            state["_experiment_key"] = self._experiment.get_key()
        state["_experiment"] = None
        return state

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        if global_rank() != 0:
            return
        if uploads.uploads_now(self._log_model, checkpoint_callback):
            self._upload_checkpoints(checkpoint_callback)
        elif self._log_model is True:
            self._waiting_callbacks[id(checkpoint_callback)] = checkpoint_callback

    def _upload_checkpoints(self, checkpoint_callback: Any) -> None:
        section = type(checkpoint_callback).__name__
        for checkpoint in uploads.pending_checkpoints(checkpoint_callback, self._uploaded):
            details = uploads.metadata(checkpoint_callback, checkpoint, section)
            details["aliases"] = uploads.aliases(checkpoint_callback, checkpoint)
            self.experiment.log_model(
                "model", checkpoint.path, file_name=os.path.basename(checkpoint.path), overwrite=True, metadata=details
            )
            self._uploaded[checkpoint.path] = checkpoint.mtime
