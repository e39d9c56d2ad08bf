"""``WandbLogger``: metrics, config and checkpoints to Weights & Biases, with Lightning 2.6's arguments.

``pip install "accelplug[wandb]"``. The run starts on first use, on global rank 0 only. Metrics carry the
Trainer's step as ``trainer/global_step`` (declared as every metric's x-axis, as Lightning does), so
charts line up with the Trainer's steps rather than with W&B's own call counter. With ``log_model`` the
``ModelCheckpoint``'s files become ``model`` artifacts named ``model-<run id>`` holding ``model.ckpt``,
with the score, original file name and checkpoint settings as metadata and the aliases ``latest`` (and
``best`` for the best one).

The run stays open after a successful ``finalize`` so ``trainer.test`` after ``trainer.fit`` logs into
the same run, as with Lightning; it ends when the process exits or on ``logger.experiment.finish()``. A
failed or interrupted run is ended at once with exit code 1 (Lightning leaves it open): the W&B run
shows it failed, and the next ``WandbLogger`` in the same process (a sweep's next trial) starts its
own run instead of reusing the failed one.
"""

from __future__ import annotations

import inspect
import os
import warnings
from argparse import Namespace
from collections.abc import Mapping
from typing import Any, Literal

import torch

from .._import_paths import seen_at
from ..errors import MisconfigurationException, did_you_mean
from . import _checkpoint_upload as uploads
from ._params import add_prefix, as_dict, callables_to_names, json_safe
from ._requirements import Requirement, import_tracker, require_tracker
from .logger import Logger, rank_zero_experiment, rank_zero_only

__all__ = ["WandbLogger"]

_STEP_KEY = "trainer/global_step"

#: Statuses after which the run is ended at once, with a failure exit code ("interrupted": Ctrl-C).
_ENDS_THE_RUN = ("failed", "interrupted")


#: Lightning's flag at its path: whether wandb is there (0.12.10 or later); read there (scripts and tests patch it).
_WANDB_AVAILABLE = Requirement("wandb", "wandb", "0.12.10")


def _wandb() -> Any:
    return import_tracker("WandbLogger", "wandb", "wandb", "wandb")


class MediaListError(MisconfigurationException, TypeError):
    """Media given as something other than a list (one entry per item): also Lightning's ``TypeError``."""


_ARGUMENT = {"Image": "images", "Audio": "audios", "Video": "videos"}


def _check_media_lists(kind: str, items: Any, extras: Mapping[str, Any]) -> int:
    """The item count; media or per-item keywords that are not lists of it are refused in Lightning's words."""
    argument = _ARGUMENT.get(kind, kind)
    if not isinstance(items, list):
        raise MediaListError(
            f'Expected a list as "{argument}", found {type(items)}: {kind} media are a list, one entry per item.'
        )
    for key, values in extras.items():
        if not isinstance(values, list) or len(values) != len(items):
            count = len(values) if isinstance(values, list) else type(values).__name__
            raise MisconfigurationException(
                f"Expected {len(items)} items but only found {count} for {key}: {key}= must be a list with one "
                f"entry per item of {argument}."
            )
    return len(items)


def _check_init_options(wandb: Any, options: Mapping[str, Any]) -> None:
    """A keyword ``wandb.init`` does not take is named (with a close match), not a TypeError from inside it."""
    parameters = inspect.signature(wandb.init).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return  # an init that takes any keyword (a wrapper, a stand-in) checks its own
    accepted = list(parameters)
    for name in options:
        if name not in accepted:
            raise MisconfigurationException(
                f"WandbLogger got {name}=..., which wandb.init() does not accept.{did_you_mean(name, accepted)} "
                f"Accepted: {', '.join(accepted)}."
            )


class WandbLogger(Logger):
    """Log to Weights & Biases (``wandb``); arguments and behaviour as Lightning 2.6's ``WandbLogger``.

    Args:
        name: display name of the run.
        save_dir: folder W&B writes its run folder under (``dir`` is the same; ``save_dir`` wins).
        version: run id, to resume a run (``id`` is the same).
        offline: record locally only (``wandb sync`` uploads later); cannot be combined with ``log_model``.
        anonymous: allow anonymous logging.
        project: project of the run; else ``WANDB_PROJECT``; else ``"lightning_logs"``.
        log_model: False (no checkpoints), True (the ``ModelCheckpoint``'s surviving checkpoints when
            training ends; every checkpoint as it is written when ``save_top_k=-1``) or ``"all"`` (every
            checkpoint as it is written).
        experiment: an existing ``wandb`` run to log into.
        prefix: put in front of every metric name, joined with ``-``.
        checkpoint_name: artifact name for checkpoints (default ``model-<run id>``).
        add_file_policy: ``"mutable"`` copies a checkpoint before upload (safe if the file is rewritten),
            ``"immutable"`` does not.
        **kwargs: passed to ``wandb.init`` (``entity``, ``group``, ``tags``, ``mode``, ...).
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        name: str | None = None,
        save_dir: str | os.PathLike[str] | None = ".",
        version: str | None = None,
        offline: bool = False,
        dir: str | os.PathLike[str] | None = None,
        id: str | None = None,
        anonymous: bool | None = None,
        project: str | None = None,
        log_model: Literal["all"] | bool = False,
        experiment: Any = None,
        prefix: str = "",
        checkpoint_name: str | None = None,
        add_file_policy: Literal["mutable", "immutable"] = "mutable",
        **kwargs: Any,
    ) -> None:
        available = seen_at("accelplug.pytorch.loggers.wandb", "_WANDB_AVAILABLE", _WANDB_AVAILABLE)
        require_tracker("WandbLogger", "wandb", "wandb", "wandb", "0.12.10", available=available)
        if log_model not in (True, False, "all"):
            raise MisconfigurationException(
                f"WandbLogger(log_model={log_model!r}) is invalid: use False, True or 'all'."
                + did_you_mean(log_model, ["all"])
            )
        if add_file_policy not in ("mutable", "immutable"):
            raise MisconfigurationException(
                f"WandbLogger(add_file_policy={add_file_policy!r}) is invalid: use 'mutable' or 'immutable'."
            )
        if offline and log_model:
            raise MisconfigurationException(
                f"WandbLogger(offline=True, log_model={log_model!r}): checkpoints cannot be uploaded in offline "
                "mode. Use offline=False to upload them, or log_model=False."
            )
        self._offline = offline
        self._log_model = log_model
        self._prefix = prefix
        self._experiment = experiment
        self._uploaded: dict[str, float] = {}
        self._waiting_callbacks: dict[int, Any] = {}
        self.add_file_policy = add_file_policy
        folder = os.fspath(save_dir) if save_dir is not None else (os.fspath(dir) if dir is not None else None)
        self._wandb_init: dict[str, Any] = {
            "name": name,
            "project": project or os.environ.get("WANDB_PROJECT", "lightning_logs"),
            "dir": folder,
            "id": version or id,
            "resume": "allow",
        }
        if anonymous is not None:  # wandb warns about the setting whenever it is passed
            self._wandb_init["anonymous"] = "allow" if anonymous else None
        if offline:
            self._wandb_init["mode"] = "offline"
        self._wandb_init.update(kwargs)
        self._project = self._wandb_init.get("project")
        self._save_dir = self._wandb_init.get("dir")
        self._name = self._wandb_init.get("name")
        self._id = self._wandb_init.get("id")
        self._checkpoint_name = checkpoint_name

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the live run (it holds a connection); the copy reopens the same run by its id.

        The run is started first, as Lightning does: a ``ddp_spawn`` worker and the main process then log into one
        run, where a run started in the worker would leave the main process starting another one later."""
        _ = self.experiment
        state = self.__dict__.copy()
        if self._experiment is not None:
            state["_id"] = getattr(self._experiment, "id", self._id)
            state["_wandb_init"] = {**self._wandb_init, "id": state["_id"]}
        state["_experiment"] = None
        return state

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The ``wandb`` run, started on first use (on rank 0; other ranks get a stand-in)."""
        if self._experiment is None:
            wandb = _wandb()
            if wandb.run is not None:
                warnings.warn(
                    "A wandb run is already in progress in this process; this WandbLogger logs into it. "
                    "Call wandb.finish() before creating the logger to start a run of its own.",
                    stacklevel=2,
                )
                self._experiment = wandb.run
            else:
                _check_init_options(wandb, self._wandb_init)
                self._experiment = wandb.init(**self._wandb_init)
                if callable(getattr(self._experiment, "define_metric", None)):
                    if self._wandb_init.get("sync_tensorboard"):
                        self._experiment.define_metric("*", step_metric="global_step")
                    else:
                        self._experiment.define_metric(_STEP_KEY)
                        self._experiment.define_metric("*", step_metric=_STEP_KEY, step_sync=True)
        return self._experiment

    def watch(
        self, model: torch.nn.Module, log: str | None = "gradients", log_freq: int = 100, log_graph: bool = True
    ) -> None:
        """Record gradients (and parameters with ``log="all"``) every ``log_freq`` steps, through ``wandb.watch``."""
        self.experiment.watch(model, log=log, log_freq=log_freq, log_graph=log_graph)

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        """Update the run's config; callables become their names, values JSON cannot hold their ``str()``."""
        config = json_safe(callables_to_names(as_dict(params)))
        self.experiment.config.update(config, allow_val_change=True)

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Log one row of metrics, with the Trainer's ``step`` as ``trainer/global_step``."""
        row = add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR)
        if step is not None and not self._wandb_init.get("sync_tensorboard"):
            row[_STEP_KEY] = step
        self.experiment.log(row)

    @rank_zero_only
    def log_table(
        self,
        key: str,
        columns: list[str] | None = None,
        data: list[list[Any]] | None = None,
        dataframe: Any = None,
        step: int | None = None,
    ) -> None:
        """Log a ``wandb.Table`` from ``columns`` and ``data``, or from a pandas ``dataframe``."""
        self.log_metrics({key: _wandb().Table(columns=columns, data=data, dataframe=dataframe)}, step)

    @rank_zero_only
    def log_text(
        self,
        key: str,
        columns: list[str] | None = None,
        data: list[list[str]] | None = None,
        dataframe: Any = None,
        step: int | None = None,
    ) -> None:
        """Log text as a table."""
        self.log_table(key, columns, data, dataframe, step)

    def _log_media(self, kind: str, key: str, items: list[Any], step: int | None, extras: Mapping[str, Any]) -> None:
        count = _check_media_lists(kind, items, extras)
        media = getattr(_wandb(), kind)
        per_item = [{name: values[i] for name, values in extras.items()} for i in range(count)]
        self.log_metrics({key: [media(item, **options) for item, options in zip(items, per_item, strict=True)]}, step)

    @rank_zero_only
    def log_image(self, key: str, images: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """Log images (tensors, arrays, PIL images or paths); each keyword is a list with one entry per image."""
        self._log_media("Image", key, images, step, kwargs)

    @rank_zero_only
    def log_audio(self, key: str, audios: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """Log audio clips (arrays or paths); each keyword is a list with one entry per clip."""
        self._log_media("Audio", key, audios, step, kwargs)

    @rank_zero_only
    def log_video(self, key: str, videos: list[Any], step: int | None = None, **kwargs: Any) -> None:
        """Log videos (arrays or paths); each keyword is a list with one entry per video."""
        self._log_media("Video", key, videos, step, kwargs)

    @property
    def save_dir(self) -> str | None:
        return self._save_dir

    @property
    def name(self) -> str | None:
        """The project (not the run's display name, which is ``experiment.name``)."""
        return self._project

    @property
    def version(self) -> str | None:
        """The run id; asking does not start a run."""
        return str(self._experiment.id) if self._experiment is not None else self._id

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        if uploads.uploads_now(self._log_model, checkpoint_callback):
            self._upload_checkpoints(checkpoint_callback)
        elif self._log_model is True:
            self._waiting_callbacks[id(checkpoint_callback)] = checkpoint_callback

    @staticmethod
    @rank_zero_only
    def download_artifact(
        artifact: str,
        save_dir: str | os.PathLike[str] | None = None,
        artifact_type: str | None = None,
        use_artifact: bool | None = True,
    ) -> str:
        """Download an artifact (through the current run when there is one, so W&B records the use)."""
        wandb = _wandb()
        if wandb.run is not None and use_artifact:
            found = wandb.run.use_artifact(artifact)
        else:
            found = wandb.Api().artifact(artifact, type=artifact_type)
        return str(found.download(root=None if save_dir is None else os.fspath(save_dir)))

    def use_artifact(self, artifact: str, artifact_type: str | None = None) -> Any:
        """Record that this run uses ``artifact`` and return it."""
        return self.experiment.use_artifact(artifact, type=artifact_type)

    @rank_zero_only
    def finalize(self, status: str) -> None:
        """Upload the checkpoints ``log_model=True`` waited for (on success); end a failed or interrupted run."""
        if self._experiment is None:
            return
        if status == "success":
            for callback in self._waiting_callbacks.values():
                self._upload_checkpoints(callback)
        elif status in _ENDS_THE_RUN:
            run = self._experiment
            self._id = str(run.id)
            self._wandb_init["id"] = self._id  # a later use of this logger resumes the same run
            self._experiment = None
            run.finish(exit_code=1)

    def _upload_checkpoints(self, checkpoint_callback: Any) -> None:
        wandb = _wandb()
        section = type(checkpoint_callback).__name__
        for checkpoint in uploads.pending_checkpoints(checkpoint_callback, self._uploaded):
            if not self._checkpoint_name:
                self._checkpoint_name = f"model-{self.experiment.id}"
            artifact = wandb.Artifact(
                name=self._checkpoint_name,
                type="model",
                metadata=uploads.metadata(checkpoint_callback, checkpoint, section),
            )
            artifact.add_file(checkpoint.path, name="model.ckpt", policy=self.add_file_policy)
            self.experiment.log_artifact(artifact, aliases=uploads.aliases(checkpoint_callback, checkpoint))
            self._uploaded[checkpoint.path] = checkpoint.mtime
