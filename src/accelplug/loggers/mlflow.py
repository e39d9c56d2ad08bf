"""``MLFlowLogger``: params, metrics and checkpoints to an MLflow tracking server or folder.

``pip install "accelplug[mlflow]"``. Arguments and behaviour as Lightning 2.6's ``MLFlowLogger``: the run
is created on first use (rank 0 only) in ``experiment_name`` (created when missing); hyper-parameters are
flattened to ``outer/inner`` keys, values cut to 250 characters and sent 100 at a time; metric names lose
characters MLflow refuses (a warning names the change); ``finalize`` ends the run as FINISHED or FAILED.
With ``log_model`` each checkpoint ``path/to/name.ckpt`` becomes the artifact folder ``name/`` holding
the file, ``metadata.yaml`` (score, original file name, checkpoint settings) and ``aliases.txt``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
import warnings
from argparse import Namespace
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._import_paths import seen_at
from ..errors import MisconfigurationException, did_you_mean
from . import _checkpoint_upload as uploads
from ._params import add_prefix, as_dict, flatten
from ._requirements import Requirement, TrackerNotInstalledError, import_tracker, require_tracker
from .logger import Logger, rank_zero_experiment, rank_zero_only

__all__ = ["LOCAL_FILE_URI_PREFIX", "MLFlowLogger"]

log = logging.getLogger(__name__)

LOCAL_FILE_URI_PREFIX = "file:"

#: MLflow accepts only these characters in a metric name (besides letters and digits).
_METRIC_NAME_REFUSED = re.compile(r"[^a-zA-Z0-9_/. -]+")

#: The Trainer's status words and MLflow's run states they end a run with ("interrupted": Ctrl-C).
_STATUS = {"success": "FINISHED", "finished": "FINISHED", "failed": "FAILED", "interrupted": "KILLED"}
_MLFLOW_END_STATES = ("FINISHED", "FAILED", "KILLED")

#: MLflow's limits: 100 params per ``log_batch`` call; Lightning cuts values to 250 characters.
_PARAMS_PER_BATCH = 100
_PARAM_VALUE_CHARS = 250

#: The metadata section name and the callback settings recorded, as Lightning's MLflow logger has them.
_METADATA_KEYS = (*uploads.CHECKPOINT_METADATA_KEYS, "_every_n_val_epochs")


#: Lightning's flags at its path: whether MLflow is there, and new enough (2.8) for ``synchronous`` logging. The
#: logger reads them at Lightning's path (:func:`_flag`), where scripts and tests patch them.
_MLFLOW_AVAILABLE = Requirement("mlflow", "mlflow", "1.0.0")
_MLFLOW_SYNCHRONOUS_AVAILABLE = Requirement("mlflow", "mlflow", "2.8.0")
_PUBLIC_PATH = "accelplug.pytorch.loggers.mlflow"


def _flag(name: str) -> object:
    return seen_at(_PUBLIC_PATH, name, globals()[name])


def _get_resolve_tags() -> Any:
    """MLflow's function that adds the run's context tags (source, user, git commit) to the given ones (Lightning's
    name: tests replace it at Lightning's path)."""
    from mlflow.tracking.context.registry import resolve_tags

    return resolve_tags


def _mlflow() -> Any:
    return import_tracker("MLFlowLogger", "mlflow", "mlflow", "mlflow")


def _mlflow_version() -> str:
    return str(getattr(_mlflow(), "__version__", "(unknown version)"))


class MLFlowLogger(Logger):
    """Log to MLflow; arguments and behaviour as Lightning 2.6's ``MLFlowLogger``.

    Args:
        experiment_name: MLflow experiment the run goes into (created when missing).
        run_name: the run's name (the ``mlflow.runName`` tag, which it overrides in ``tags``).
        tracking_uri: tracking server or store; default ``MLFLOW_TRACKING_URI``, else ``file:<save_dir>``
            (a folder store, which MLflow 3 accepts only with ``MLFLOW_ALLOW_FILE_STORE=true``).
        tags: tags for the run.
        save_dir: local folder used when no ``tracking_uri`` is given.
        log_model: False, True (checkpoints when training ends; as written when ``save_top_k=-1``) or
            ``"all"`` (every checkpoint as it is written).
        prefix: put in front of every metric name, joined with ``-``.
        artifact_location: where a newly created experiment stores artifacts (the server decides if None).
        run_id: log into this existing run instead of creating one.
        synchronous: whether each logging call waits for the server (MLflow >= 2.8); MLflow decides if None.
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        experiment_name: str = "lightning_logs",
        run_name: str | None = None,
        tracking_uri: str | None = None,
        tags: dict[str, Any] | None = None,
        save_dir: str | None = "./mlruns",
        log_model: Literal[True, False, "all"] = False,
        prefix: str = "",
        artifact_location: str | None = None,
        run_id: str | None = None,
        synchronous: bool | None = None,
    ) -> None:
        require_tracker("MLFlowLogger", "mlflow", "mlflow", "mlflow", "1.0.0", available=_flag("_MLFLOW_AVAILABLE"))
        if synchronous is not None:
            try:
                require_tracker(
                    "MLFlowLogger(synchronous=...)",
                    "mlflow",
                    "mlflow",
                    "mlflow",
                    "2.8.0",
                    available=_flag("_MLFLOW_SYNCHRONOUS_AVAILABLE"),
                )
            except TrackerNotInstalledError as exc:
                raise TrackerNotInstalledError(
                    exc.logger, exc.package, exc.extra, f"{exc.problem} (or leave synchronous=None)"
                ) from None
        if log_model not in (True, False, "all"):
            raise MisconfigurationException(
                f"MLFlowLogger(log_model={log_model!r}) is invalid: use False, True or 'all'."
                + did_you_mean(log_model, ["all"])
            )
        # Read at construction, not at import as Lightning's default argument does, so a variable set by
        # the script before it builds the logger counts.
        tracking_uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not tracking_uri:
            tracking_uri = f"{LOCAL_FILE_URI_PREFIX}{save_dir}"
        self._experiment_name = experiment_name
        self._experiment_id: str | None = None
        self._tracking_uri = tracking_uri
        self._run_name = run_name
        self._run_id = run_id
        self.tags = tags
        self._log_model = log_model
        self._uploaded: dict[str, float] = {}
        self._waiting_callback: Any = None
        self._prefix = prefix
        self._artifact_location = artifact_location
        self._log_batch_kwargs: dict[str, Any] = {} if synchronous is None else {"synchronous": synchronous}
        self._initialized = False
        mlflow = _mlflow()
        try:
            self._mlflow_client = mlflow.tracking.MlflowClient(tracking_uri)
        except mlflow.exceptions.MlflowException as exc:
            # MLflow 3 refuses the folder store that Lightning's default (file:./mlruns) selects.
            raise MisconfigurationException(
                f"MLFlowLogger(tracking_uri={tracking_uri!r}) was refused by MLflow {_mlflow_version()}: {exc}\n"
                "Use a tracking server (tracking_uri='http://127.0.0.1:5000' after `mlflow server`), a database "
                "(tracking_uri='sqlite:///mlflow.db'), or keep the folder store with MLFLOW_ALLOW_FILE_STORE=true."
            ) from exc

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The ``MlflowClient``; the first use creates the experiment (if missing) and the run, on rank 0."""
        if self._initialized:
            return self._mlflow_client
        mlflow = _mlflow()
        # As Lightning does: module-level mlflow calls in user code then reach the same server.
        mlflow.set_tracking_uri(self._tracking_uri)
        if self._run_id is not None:
            run = self._mlflow_client.get_run(self._run_id)
            self._experiment_id = run.info.experiment_id
            self._initialized = True
            return self._mlflow_client
        if self._experiment_id is None:
            existing = self._mlflow_client.get_experiment_by_name(self._experiment_name)
            if existing is not None and existing.lifecycle_stage != "deleted":
                self._experiment_id = existing.experiment_id
            else:
                log.warning("MLflow experiment %r not found; creating it.", self._experiment_name)
                self._experiment_id = self._mlflow_client.create_experiment(
                    name=self._experiment_name, artifact_location=self._artifact_location
                )
        if self._run_name is not None:
            from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

            self.tags = dict(self.tags or {})
            if MLFLOW_RUN_NAME in self.tags:
                log.warning("The tag %s is replaced by run_name=%r.", MLFLOW_RUN_NAME, self._run_name)
            self.tags[MLFLOW_RUN_NAME] = self._run_name
        resolve_tags = seen_at(_PUBLIC_PATH, "_get_resolve_tags", _get_resolve_tags)()
        run = self._mlflow_client.create_run(experiment_id=self._experiment_id, tags=resolve_tags(self.tags))
        self._run_id = run.info.run_id
        self._initialized = True
        return self._mlflow_client

    @property
    def run_id(self) -> str | None:
        """The run's id (asking creates the run)."""
        _ = self.experiment
        return self._run_id

    @property
    def experiment_id(self) -> str | None:
        """The experiment's id (asking creates the run)."""
        _ = self.experiment
        return self._experiment_id

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        """Record flattened params (``outer/inner``), each value as text cut to 250 characters."""
        from mlflow.entities import Param

        flat = flatten(as_dict(params))
        batch = [Param(key=key, value=str(value)[:_PARAM_VALUE_CHARS]) for key, value in flat.items()]
        for start in range(0, len(batch), _PARAMS_PER_BATCH):
            self.experiment.log_batch(
                run_id=self.run_id, params=batch[start : start + _PARAMS_PER_BATCH], **self._log_batch_kwargs
            )

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Record metrics at ``step`` (0 when None); text values are dropped with a warning, as in Lightning."""
        from mlflow.entities import Metric

        timestamp_ms = int(time.time() * 1000)
        batch = []
        for key, value in add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR).items():
            if isinstance(value, str):
                log.warning("Discarding metric with string value %s=%s.", key, value)
                continue
            allowed = _METRIC_NAME_REFUSED.sub("", key)
            if allowed != key:
                warnings.warn(
                    f"MLflow does not accept special characters in metric name {key!r} (only letters, digits and "
                    f"'_', '/', '.', '-', ' '): it is logged as {allowed!r}.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            batch.append(Metric(key=allowed, value=float(value), timestamp=timestamp_ms, step=step or 0))
        self.experiment.log_batch(run_id=self.run_id, metrics=batch, **self._log_batch_kwargs)

    @rank_zero_only
    def finalize(self, status: str = "success") -> None:
        """Upload checkpoints ``log_model=True`` waited for, then end the run: FINISHED, FAILED or KILLED."""
        if not self._initialized:
            return
        state = _STATUS.get(status, status)
        if state not in _MLFLOW_END_STATES:
            accepted = [*_STATUS, *_MLFLOW_END_STATES]
            raise MisconfigurationException(
                f"MLFlowLogger.finalize(status={status!r}) is not a way a run can end: use one of "
                f"{', '.join(repr(a) for a in accepted)}.{did_you_mean(status, accepted)}"
            )
        if self._waiting_callback is not None:
            self._upload_checkpoints(self._waiting_callback)
        if self.experiment.get_run(self.run_id):
            self.experiment.set_terminated(self.run_id, state)

    @property
    def save_dir(self) -> str | None:
        """The local folder of a ``file:`` tracking URI; None for a server."""
        if self._tracking_uri.startswith(LOCAL_FILE_URI_PREFIX):
            return self._tracking_uri[len(LOCAL_FILE_URI_PREFIX) :]
        return None

    @property
    def name(self) -> str | None:
        """The MLflow experiment's id (Lightning's choice, not its name)."""
        return self.experiment_id

    @property
    def version(self) -> str | None:
        """The run's id."""
        return self.run_id

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        if uploads.uploads_now(self._log_model, checkpoint_callback):
            self._upload_checkpoints(checkpoint_callback)
        elif self._log_model is True:
            self._waiting_callback = checkpoint_callback

    def _upload_checkpoints(self, checkpoint_callback: Any) -> None:
        import yaml

        for checkpoint in uploads.pending_checkpoints(checkpoint_callback, self._uploaded):
            folder = Path(checkpoint.path).stem
            self.experiment.log_artifact(self._run_id, checkpoint.path, folder)
            with tempfile.TemporaryDirectory() as scratch:
                details = uploads.metadata(checkpoint_callback, checkpoint, "Checkpoint", _METADATA_KEYS)
                Path(scratch, "metadata.yaml").write_text(yaml.dump(details, default_flow_style=False))
                Path(scratch, "aliases.txt").write_text(str(uploads.aliases(checkpoint_callback, checkpoint)))
                self.experiment.log_artifacts(self._run_id, scratch, folder)
            self._uploaded[checkpoint.path] = checkpoint.mtime
