"""TensorBoard event files: Lightning's default logger when ``tensorboard`` (or ``tensorboardX``) is installed.

Lightning's two ``TensorBoardLogger`` classes, argument for argument, as one implementation:
:class:`FabricTensorBoardLogger` is ``lightning.fabric.loggers.TensorBoardLogger`` (``root_dir`` is the folder
given, the graph is logged whenever asked) and :class:`TensorBoardLogger`, the Trainer's, adds ``save_dir``
(``root_dir`` becomes ``save_dir/name``), ``log_graph=`` and ``hparams.yaml``. ``experiment`` is the
``SummaryWriter`` itself (torch's, or tensorboardX's when only that is installed), so
``self.logger.experiment.add_image(...)`` in a LightningModule works unchanged. Hyper-parameters go to
TensorBoard's HPARAMS tab (with the placeholder metric ``hp_metric`` unless ``default_hp_metric=False``) and,
for the Trainer's logger, to ``hparams.yaml`` when the run ends.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from argparse import Namespace
from collections.abc import Mapping
from typing import Any

import torch

from ..errors import MisconfigurationException
from ._files import SaveDirFolders, VersionedFolders, is_directory, write_hparams_yaml
from ._params import add_prefix, as_dict, flatten
from ._requirements import module_found
from .logger import Logger, rank_zero_experiment, rank_zero_only

__all__ = ["FabricTensorBoardLogger", "TensorBoardLogger", "tensorboard_available"]


def tensorboard_available() -> bool:
    """Whether a ``SummaryWriter`` can be made: torch's needs ``tensorboard``, else ``tensorboardX``; both need
    numpy, which may be absent (or blocked) even where tensorboard's files are installed. Looked up, not imported:
    importing tensorboard costs a large part of a second."""
    return module_found("numpy") and any(module_found(name) for name in ("tensorboard", "tensorboardX"))


#: Whether torch's ``SummaryWriter`` can be used (its ``tensorboard`` package is installed); else tensorboardX's.
#: A module-level name: jsonargparse (LightningCLI) reads the branch it selects to find where ``**kwargs`` go.
_TORCH_WRITER = importlib.util.find_spec("tensorboard") is not None


def _hparams_summaries(params: dict[str, Any], metrics: dict[str, Any]) -> Any:
    """The three summaries TensorBoard's HPARAMS tab reads (experiment, session start, session end)."""
    name = (
        "torch.utils.tensorboard.summary"
        if importlib.util.find_spec("tensorboard") is not None
        else "tensorboardX.summary"
    )
    return importlib.import_module(name).hparams(params, metrics)


def _sanitized(params: dict[str, Any]) -> dict[str, Any]:
    """What TensorBoard's HPARAMS tab accepts: numbers, strings and booleans; anything else as its ``str``."""
    kept: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, torch.Tensor) and value.ndim == 0:
            value = value.item()
        if value is None or not isinstance(value, (bool, int, float, str)):
            value = str(value)
        kept[key] = value
    return kept


class FabricTensorBoardLogger(VersionedFolders, Logger):
    """Lightning Fabric's ``TensorBoardLogger``: event files in ``root_dir/name/version_N[/sub_dir]``.

    ``experiment`` is the ``SummaryWriter``; ``**kwargs`` go to it (``flush_secs``, ``max_queue``...). The
    Trainer's :class:`TensorBoardLogger` is this class with ``save_dir``, ``log_graph=`` and ``hparams.yaml``.
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        default_hp_metric: bool = True,
        prefix: str = "",
        sub_dir: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if not tensorboard_available():
            raise MisconfigurationException(
                "TensorBoardLogger needs the tensorboard package (or tensorboardX), which is not installed: "
                'pip install "accelplug[tensorboard]", or log with CSVLogger.'
            )
        self._root_dir = os.fspath(root_dir)
        self._name = name or ""
        self._version = version
        self._sub_dir = None if sub_dir is None else os.fspath(sub_dir)
        self._default_hp_metric = default_hp_metric
        self._prefix = prefix
        self._kwargs = kwargs
        self._check_filesystem()
        self._experiment: Any = None

    @property
    def log_dir(self) -> str:
        """``<folder given>/name/version_N``, then ``sub_dir`` when given; ``~`` and ``$VARS`` expanded."""
        folder = self._run_folder()
        if self._sub_dir is not None:
            folder = os.path.join(folder, self._sub_dir)
        return os.path.expanduser(os.path.expandvars(folder))

    @property
    def sub_dir(self) -> str | None:
        return self._sub_dir

    @property
    @rank_zero_experiment
    def experiment(self) -> Any:
        """The ``SummaryWriter`` (made on first use, on global rank 0 only)."""
        if self._experiment is None:
            if self.root_dir:
                self._fs.makedirs(self.root_dir, exist_ok=True)
            # torch's SummaryWriter, else tensorboardX's, as Lightning picks; imported by name here so LightningCLI
            # (jsonargparse) finds where **kwargs go and offers SummaryWriter's arguments (--trainer.logger.comment)
            if _TORCH_WRITER:
                from torch.utils.tensorboard import SummaryWriter
            else:
                from tensorboardX import SummaryWriter  # type: ignore[no-redef,import-not-found,unused-ignore]
            self._experiment = SummaryWriter(log_dir=self.log_dir, **self._kwargs)
        return self._experiment

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        for key, value in add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR).items():
            if isinstance(value, torch.Tensor):
                value = value.item()
            if isinstance(value, dict):
                self.experiment.add_scalars(key, value, step)
                continue
            try:
                self.experiment.add_scalar(key, value, step)
            except Exception as exc:
                raise MisconfigurationException(
                    f"TensorBoardLogger cannot log {key}={value!r}: TensorBoard takes a number, a scalar tensor, "
                    "or a dict of them."
                ) from exc

    @rank_zero_only
    def log_hyperparams(
        self, params: dict[str, Any] | Namespace, metrics: dict[str, Any] | None = None, step: int | None = None
    ) -> None:
        """Record ``params`` in the HPARAMS tab; ``metrics`` (or ``hp_metric=-1``) is what it plots them against."""
        if metrics is None:
            metrics = {"hp_metric": -1} if self._default_hp_metric else None
        elif not isinstance(metrics, dict):
            metrics = {"hp_metric": metrics}
        if not metrics:
            return
        self.log_metrics(metrics, step)
        flat = _sanitized(flatten(as_dict(params)))
        writer = self.experiment._get_file_writer()
        for summary in _hparams_summaries(flat, metrics):
            writer.add_summary(summary, step)

    @rank_zero_only
    def log_graph(self, model: torch.nn.Module, input_array: Any = None) -> None:
        """The model's graph, traced on ``input_array`` or the model's ``example_input_array``."""
        if input_array is None:
            input_array = getattr(model, "example_input_array", None)
        model = _user_module(model)
        if input_array is None:
            warnings.warn(
                "Could not log computational graph to TensorBoard: The `model.example_input_array` attribute is not "
                "set or `input_array` was not given.",
                stacklevel=2,
            )
            return
        if not isinstance(input_array, (torch.Tensor, tuple)):
            warnings.warn(
                "Could not log computational graph to TensorBoard: The `input_array` or `model.example_input_array` "
                f"has type {type(input_array)} which can't be traced by TensorBoard. Make the input array a tuple "
                "representing the positional arguments to the model's `forward()` implementation.",
                stacklevel=2,
            )
            return
        transfer = getattr(model, "_apply_batch_transfer_handler", None)
        before = getattr(model, "_on_before_batch_transfer", None)
        if callable(before) and callable(transfer):
            input_array = transfer(before(input_array))
        from ..core.saving import jit_reading  # a module without a trainer (the graph logged before fit) traces

        with jit_reading(model):
            self.experiment.add_graph(model, input_array)

    @rank_zero_only
    def save(self) -> None:
        if self._experiment is not None:
            self._experiment.flush()

    @rank_zero_only
    def finalize(self, status: str) -> None:
        if self._experiment is not None:
            self._experiment.flush()
            self._experiment.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_experiment"] = None  # the writer holds open files and a thread; a copy opens its own
        return state


def _user_module(model: torch.nn.Module) -> torch.nn.Module:
    """The user's module behind what ``fabric.setup`` returned (its graph is traced), else ``model`` itself.

    Read from the wrapper's ``_original_module`` rather than by importing Fabric's class: Fabric sits above
    the loggers."""
    inner = getattr(model, "_original_module", None)
    return inner if isinstance(inner, torch.nn.Module) else model


class TensorBoardLogger(SaveDirFolders, FabricTensorBoardLogger):
    """Event files in ``save_dir/name/version_N[/sub_dir]``; ``experiment`` is the ``SummaryWriter``.

    ``**kwargs`` go to the ``SummaryWriter`` (``flush_secs``, ``max_queue``...).
    """

    NAME_HPARAMS_FILE = "hparams.yaml"

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        log_graph: bool = False,
        default_hp_metric: bool = True,
        prefix: str = "",
        sub_dir: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(save_dir, name, version, default_hp_metric, prefix, sub_dir, **kwargs)
        self._log_graph = bool(log_graph)
        #: every hyper-parameter logged so far (written to ``hparams.yaml`` by ``save``)
        self.hparams: dict[str, Any] = {}

    @rank_zero_only
    def log_hyperparams(
        self, params: dict[str, Any] | Namespace, metrics: dict[str, Any] | None = None, step: int | None = None
    ) -> None:
        """Record ``params`` in the HPARAMS tab and in ``hparams.yaml``; ``metrics`` (or ``hp_metric=-1``) is what
        the tab plots them against."""
        self.hparams.update(as_dict(params))
        super().log_hyperparams(params, metrics, step)

    @rank_zero_only
    def log_graph(self, model: torch.nn.Module, input_array: Any = None) -> None:
        """The model's graph (with ``log_graph=True``), traced on ``input_array`` or ``example_input_array``."""
        if not self._log_graph:
            return
        has_hooks = callable(getattr(model, "_on_before_batch_transfer", None))
        example = input_array if input_array is not None else getattr(model, "example_input_array", None)
        if not has_hooks and isinstance(example, (torch.Tensor, tuple)):
            device = next((p.device for p in model.parameters()), None)
            if device is not None:  # a plain module: its input goes where its parameters are
                from ..data.batches import move_data_to_device

                input_array = move_data_to_device(example, device)
        super().log_graph(model, input_array)

    @rank_zero_only
    def save(self) -> None:
        """Flush the events; write ``hparams.yaml`` once the run folder exists and has none yet."""
        super().save()
        hparams_file = os.path.join(self.log_dir, self.NAME_HPARAMS_FILE)
        if is_directory(self._fs, self.log_dir) and not self._fs.isfile(hparams_file):
            write_hparams_yaml(self._fs, hparams_file, self.hparams)

    @rank_zero_only
    def finalize(self, status: str) -> None:
        super().finalize(status)
        if status == "success":
            self.save()
