"""``ModelCheckpoint``: periodic and best-so-far checkpoints, with Lightning 2.6's arguments, names and timing.

When it saves: every ``every_n_epochs`` epochs (the default, 1), every ``every_n_train_steps`` optimizer steps or
every ``train_time_interval`` of training (one of the three). With ``monitor`` it keeps the ``save_top_k`` best by
that metric (``mode`` 'min' or 'max'); without, the newest (``save_top_k`` 1), every one (-1) or none (0).
File names follow ``filename`` (``"{epoch}-{val_loss:.2f}"`` gives ``epoch=3-val_loss=0.25.ckpt``), by default
``epoch=E-step=N.ckpt``; a name already on disk gets ``-v1``, ``-v2``... ``save_last`` (True, or "link" for a
symbolic link to the newest file) also writes ``last.ckpt`` whenever a checkpoint is written.

Where: ``dirpath``, else ``<save_dir>/<name>/<version>/checkpoints`` of the first logger, else
``<default_root_dir>/checkpoints``, decided at ``setup`` as Lightning does. Each saved file is announced to the
loggers' ``after_save_checkpoint`` on the global-zero process, which is how trackers upload checkpoints.
"""

# No ``from __future__ import annotations`` here: the constructor's annotations stay real types, as Lightning's
# are, so a parser built from its signature (jsonargparse's ``ArgumentParser(type=...)``, LightningCLI) reads them.
import math
import os
import re
import shutil
import time
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import torch

from ..errors import MisconfigurationException, did_you_mean
from ..overrides import overrides
from .base import Checkpoint

__all__ = ["ModelCheckpoint"]

#: ``{name}`` or ``{name:spec}`` in a filename template.
_FIELD = re.compile(r"\{([^{}:]+)(:[^{}]*)?\}")
_MODES = ("min", "max")


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _exists(path: str) -> bool:
    if _is_remote(path):
        import fsspec  # type: ignore[import-untyped]

        fs, inner = fsspec.core.url_to_fs(path)
        return bool(fs.exists(inner))
    return os.path.exists(path)


def _count(label: str, value: Any) -> int:
    """``None`` or an int >= 0 (0 and None both mean "not by this trigger")."""
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MisconfigurationException(
            f"Invalid value for {label}={value!r}. Must be >= 0 (an int; 0 or None: not by this trigger)."
        )
    return value


def _as_tensor(value: Any) -> torch.Tensor:
    return value.detach() if isinstance(value, torch.Tensor) else torch.tensor(value)


class ModelCheckpoint(Checkpoint):
    CHECKPOINT_JOIN_CHAR = "-"
    CHECKPOINT_EQUALS_CHAR = "="
    CHECKPOINT_NAME_LAST = "last"
    FILE_EXTENSION = ".ckpt"
    STARTING_VERSION = 1

    def __init__(
        self,
        dirpath: str | os.PathLike[str] | None = None,
        filename: str | None = None,
        monitor: str | None = None,
        verbose: bool = False,
        save_last: bool | Literal["link"] | None = None,
        save_top_k: int = 1,
        save_on_exception: bool = False,
        save_weights_only: bool = False,
        mode: str = "min",
        auto_insert_metric_name: bool = True,
        every_n_train_steps: int | None = None,
        train_time_interval: timedelta | None = None,
        every_n_epochs: int | None = None,
        save_on_train_epoch_end: bool | None = None,
        enable_version_counter: bool = True,
    ) -> None:
        if mode not in _MODES:
            raise MisconfigurationException(
                f"ModelCheckpoint: `mode` can be min, max but got {mode}.{did_you_mean(mode, _MODES)}"
            )
        if save_last not in (None, True, False, "link"):
            raise MisconfigurationException(
                f"ModelCheckpoint(save_last={save_last!r}) is invalid: use None, True, False or 'link'."
            )
        if not isinstance(save_top_k, int) or isinstance(save_top_k, bool) or save_top_k < -1:
            raise MisconfigurationException(
                f"Invalid value for save_top_k={save_top_k!r}. Must be >= -1 (-1: keep all, 0: none, k: the best k)."
            )
        if monitor is None and save_top_k not in (-1, 0, 1):
            raise MisconfigurationException(
                f"ModelCheckpoint(save_top_k={save_top_k}, monitor=None) is not a valid configuration. No quantity "
                "for top_k to track: use -1 (keep all), 0 (none) or 1 (the newest), or name a monitor."
            )
        if train_time_interval is not None and not isinstance(train_time_interval, timedelta):
            raise MisconfigurationException(
                f"ModelCheckpoint(train_time_interval={train_time_interval!r}) is invalid: use a datetime.timedelta."
            )
        steps, epochs = _count("every_n_train_steps", every_n_train_steps), _count("every_n_epochs", every_n_epochs)
        if every_n_train_steps is None and every_n_epochs is None and train_time_interval is None:
            epochs = 1  # Lightning's default trigger: every epoch
        if (steps > 0) + (epochs > 0) + (train_time_interval is not None) > 1:
            raise MisconfigurationException(
                f"Combination of parameters every_n_train_steps={every_n_train_steps!r}, "
                f"every_n_epochs={every_n_epochs!r} and train_time_interval={train_time_interval!r} should be "
                "mutually exclusive: pick one of the three triggers, use another ModelCheckpoint for another."
            )
        self.monitor = monitor
        self.verbose = verbose
        self.save_last = save_last
        self.save_top_k = save_top_k
        self.save_on_exception = save_on_exception
        self.save_weights_only = save_weights_only
        self.auto_insert_metric_name = auto_insert_metric_name
        self.mode = mode
        self.filename = filename
        self.dirpath: str | None = None
        if dirpath is not None:
            text = os.fspath(dirpath)
            self.dirpath = text if _is_remote(text) else os.path.realpath(os.path.expanduser(text))
        self._every_n_train_steps = steps
        self._every_n_epochs = epochs
        self._train_time_interval = train_time_interval
        self._save_on_train_epoch_end = save_on_train_epoch_end
        self._enable_version_counter = enable_version_counter
        self.current_score: torch.Tensor | None = None
        self.best_k_models: dict[str, torch.Tensor] = {}
        self.kth_best_model_path = ""
        self.kth_value = torch.tensor(math.inf if mode == "min" else -math.inf)
        self.best_model_score: torch.Tensor | None = None
        self.best_model_path = ""
        self.last_model_path = ""
        self._last_global_step_saved = 0  # nothing to save before the first step
        self._last_checkpoint_saved = ""
        self._last_time_checked: float | None = None
        self._defer_until_validation = False
        self._validation_ran = False

    @property
    def state_key(self) -> str:
        return self._generate_state_key(
            monitor=self.monitor,
            mode=self.mode,
            every_n_train_steps=self._every_n_train_steps,
            every_n_epochs=self._every_n_epochs,
            train_time_interval=self._train_time_interval,
        )

    @property
    def every_n_epochs(self) -> int | None:
        return self._every_n_epochs

    # ---- where ----------------------------------------------------------------------------------------
    def folder(self, trainer: Any) -> Path:
        """The folder this callback writes to (accelplug's: the signal handler's ``last.ckpt`` goes there too)."""
        return Path(self.dirpath if self.dirpath is not None else self._default_dirpath(trainer))

    @staticmethod
    def _default_dirpath(trainer: Any) -> str:
        """Lightning's rule: the first logger's ``save_dir/name/version/checkpoints``, else the root's."""
        loggers = list(trainer.loggers)
        if not loggers:
            own_logger = getattr(trainer, "options", None) is not None and trainer.options.logger not in (False, None)
            if own_logger:  # the Trainer opens its own logger at the start of the run: its folder
                return os.path.join(os.fspath(trainer.log_dir), "checkpoints")
            return os.path.join(os.fspath(trainer.default_root_dir), "checkpoints")
        logger = loggers[0]
        if not all(hasattr(logger, a) for a in ("save_dir", "name", "version")):
            return os.path.join(os.fspath(trainer.log_dir), "checkpoints")
        save_dir = logger.save_dir if logger.save_dir is not None else trainer.default_root_dir
        version = logger.version if isinstance(logger.version, str) else f"version_{logger.version}"
        return os.path.join(os.fspath(save_dir), str(logger.name), version, "checkpoints")

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        dirpath = self.dirpath if self.dirpath is not None else self._default_dirpath(trainer)
        self.dirpath = trainer.strategy.broadcast_object(dirpath)
        if self.save_last == "link" and self.dirpath is not None and _is_remote(self.dirpath):
            raise MisconfigurationException(
                f"`ModelCheckpoint(save_last='link')` is only supported for local file paths, got "
                f"`dirpath={self.dirpath}`: use save_last=True there."
            )
        local = self.dirpath is not None and not _is_remote(self.dirpath)
        if trainer.is_global_zero and stage == "fit" and self.save_top_k != 0 and local:
            assert self.dirpath is not None
            if os.path.isdir(self.dirpath) and os.listdir(self.dirpath):
                # stacklevel 1: the caller is the Trainer's hook dispatcher, which tells the user nothing
                warnings.warn(f"Checkpoint directory {self.dirpath} exists and is not empty.", stacklevel=1)
        self._validation_ran = False

    # ---- names ----------------------------------------------------------------------------------------
    def format_checkpoint_name(
        self,
        metrics: dict[str, Any],
        filename: str | None = None,
        ver: int | None = None,
        prefix: str | None = None,
    ) -> str:
        """The file name a save with these metrics gets (inside ``dirpath`` when it is known)."""
        template = filename or self.filename or "{epoch}" + self.CHECKPOINT_JOIN_CHAR + "{step}"

        def fill(match: re.Match[str]) -> str:
            name, spec = match.group(1), (match.group(2) or "")[1:]
            value = metrics.get(name)
            text = format(_as_tensor(value if value is not None else 0), spec)
            return f"{name}{self.CHECKPOINT_EQUALS_CHAR}{text}" if self.auto_insert_metric_name else text

        name = _FIELD.sub(fill, template)
        if prefix is not None:
            name = self.CHECKPOINT_JOIN_CHAR.join([prefix, name])
        if ver is not None:
            name = self.CHECKPOINT_JOIN_CHAR.join([name, f"v{ver}"])
        name += self.FILE_EXTENSION
        return os.path.join(self.dirpath, name) if self.dirpath else name

    def _free_name(self, candidates: dict[str, Any], trainer: Any, replacing: str | None, last: bool = False) -> str:
        """The name to write, with ``-vN`` added while another file has it (``replacing`` may be overwritten)."""
        template = self.CHECKPOINT_NAME_LAST if last else None
        path = self.format_checkpoint_name(candidates, template)
        version = self.STARTING_VERSION
        while self._enable_version_counter and path != replacing and self.file_exists(path, trainer):
            path = self.format_checkpoint_name(candidates, template, ver=version)
            version += 1
        return path

    def file_exists(self, filepath: str | os.PathLike[str], trainer: Any) -> bool:
        """Whether the file exists, as the global-zero process sees it (every rank gets the same answer)."""
        found = _exists(os.fspath(filepath)) if trainer.is_global_zero else False
        return bool(trainer.strategy.broadcast_object(found))

    def _monitor_candidates(self, trainer: Any) -> dict[str, Any]:
        candidates = {k: _as_tensor(v) for k, v in trainer.callback_metrics.items()}
        epoch, step = candidates.get("epoch"), candidates.get("step")
        candidates["epoch"] = epoch.int() if epoch is not None else torch.tensor(trainer.current_epoch)
        candidates["step"] = step.int() if step is not None else torch.tensor(trainer.global_step)
        return candidates

    # ---- when -----------------------------------------------------------------------------------------
    def _should_skip_saving_checkpoint(self, trainer: Any) -> bool:
        return (
            bool(trainer.fast_dev_run)
            or trainer.state.fn != "fit"
            or trainer.sanity_checking
            or self._last_global_step_saved == trainer.global_step
        )

    def _should_save_on_train_epoch_end(self, trainer: Any) -> bool:
        """Lightning's choice: at the epoch's end unless validation runs on its own schedule within it."""
        if self._save_on_train_epoch_end is not None:
            return self._save_on_train_epoch_end
        if trainer.check_val_every_n_epoch != 1:
            return False
        validates = overrides(trainer.lightning_module, "validation_step") and trainer.limit_val_batches != 0
        num_val_batches = getattr(trainer, "num_val_batches", None)
        if num_val_batches is not None:
            validates = bool(sum(num_val_batches) if isinstance(num_val_batches, list) else num_val_batches)
        if not validates:
            return True
        return bool(trainer.val_check_interval == 1.0)  # once per epoch (the property reads an unset interval as 1.0)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self._last_time_checked = time.monotonic()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        n = self._every_n_train_steps
        off_step = n < 1 or trainer.global_step % n != 0
        off_time = True
        if self._train_time_interval is not None:
            now = time.monotonic()
            before = self._last_time_checked
            off_time = before is None or now - before < self._train_time_interval.total_seconds()
            off_time = bool(trainer.strategy.broadcast_object(off_time))
            if not off_time:
                self._last_time_checked = now
        if off_step and off_time:
            return
        candidates = self._monitor_candidates(trainer)
        if self.monitor is not None and self.monitor not in candidates:
            self._defer_until_validation = True  # the metric comes with validation: save then
            return
        if (
            self.monitor is not None
            and getattr(pl_module, "automatic_optimization", True)
            and not self._should_save_on_train_epoch_end(trainer)
            and getattr(trainer, "is_last_batch", False)
            and self._validates_after_this_epoch(trainer, pl_module)
        ):
            self._defer_until_validation = True
            return
        if self._should_skip_saving_checkpoint(trainer):
            return
        self._save_topk_checkpoint(trainer, candidates)
        self._save_last_checkpoint(trainer, candidates)

    @staticmethod
    def _validates_after_this_epoch(trainer: Any, pl_module: Any) -> bool:
        if not overrides(pl_module, "validation_step") or trainer.limit_val_batches == 0:
            return False
        every = trainer.check_val_every_n_epoch
        return every is None or (trainer.current_epoch + 1) % every == 0

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.interrupted:
            return  # a signal stopped the epoch: fit writes last.ckpt itself, once (see trainer.process.interrupts)
        if not self._should_skip_saving_checkpoint(trainer) and self._should_save_on_train_epoch_end(trainer):
            self._epoch_save(trainer)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.state.fn == "fit" and not trainer.sanity_checking:
            self._validation_ran = True
        if self._should_skip_saving_checkpoint(trainer) or self._should_save_on_train_epoch_end(trainer):
            return
        if self._defer_until_validation:
            candidates = self._monitor_candidates(trainer)
            self._save_topk_checkpoint(trainer, candidates)
            self._save_last_checkpoint(trainer, candidates)
            self._defer_until_validation = False
            return
        self._epoch_save(trainer)

    def _epoch_save(self, trainer: Any) -> None:
        candidates = self._monitor_candidates(trainer)
        if self._every_n_epochs >= 1 and (trainer.current_epoch + 1) % self._every_n_epochs == 0:
            self._save_topk_checkpoint(trainer, candidates)
        if self._last_global_step_saved == trainer.global_step or (
            self.save_last == "link" and self._last_checkpoint_saved
        ):
            self._save_last_checkpoint(trainer, candidates)

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if (
            not self.save_on_exception
            or bool(trainer.fast_dev_run)
            or trainer.sanity_checking
            or self._last_global_step_saved == trainer.global_step
        ):
            return
        candidates = self._monitor_candidates(trainer)
        path = self.format_checkpoint_name(candidates)
        self._save_checkpoint(trainer, path)
        self._save_last_checkpoint(trainer, candidates)
        if trainer.is_global_zero:
            print(f"{type(exception).__name__}: {exception}; saved a checkpoint to {path}")

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        if self.save_last and not self._last_checkpoint_saved and not trainer.interrupted:
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    # ---- saving ---------------------------------------------------------------------------------------
    def _save_topk_checkpoint(self, trainer: Any, candidates: dict[str, Any]) -> None:
        if self.save_top_k == 0:
            return
        if self.monitor is None:
            self._save_none_monitor_checkpoint(trainer, candidates)
            return
        if self.monitor not in candidates:
            message = (
                f"ModelCheckpoint(monitor={self.monitor!r}) could not find the monitored key in the returned "
                f"metrics: {sorted(candidates)}. Log it with self.log({self.monitor!r}, value)."
            )
            if self._validation_ran:
                raise MisconfigurationException(message)
            warnings.warn(message, stacklevel=2)
        current = candidates.get(self.monitor)
        if self.check_monitor_top_k(trainer, current):
            assert current is not None
            self._update_best_and_save(current, trainer, candidates)
        elif self.verbose and trainer.is_global_zero:
            print(
                f"Epoch {int(candidates['epoch'])}, global step {int(candidates['step'])}: "
                f"{self.monitor!r} was not in top {self.save_top_k}"
            )

    def check_monitor_top_k(self, trainer: Any, current: torch.Tensor | None = None) -> bool:
        """Whether ``current`` enters the top ``save_top_k`` (all processes agree: any one saying yes)."""
        if current is None:
            return False
        if self.save_top_k == -1 or len(self.best_k_models) < self.save_top_k:
            return True
        kth = self.best_k_models[self.kth_best_model_path]
        better = bool(current < kth) if self.mode == "min" else bool(current > kth)
        return bool(trainer.strategy.reduce_any(better))

    def _update_best_and_save(self, current: torch.Tensor, trainer: Any, candidates: dict[str, Any]) -> None:
        k = len(self.best_k_models) + 1 if self.save_top_k == -1 else self.save_top_k
        dropped = None
        if len(self.best_k_models) == k and k > 0:
            dropped = self.kth_best_model_path
            self.best_k_models.pop(dropped)
        if torch.isnan(current):  # a NaN ranks last, whichever the mode
            current = torch.tensor(math.inf if self.mode == "min" else -math.inf)
        path = self._free_name(candidates, trainer, dropped)
        self.current_score = current
        self.best_k_models[path] = current
        worst, best = (max, min) if self.mode == "min" else (min, max)
        if len(self.best_k_models) == k:
            self.kth_best_model_path = worst(self.best_k_models, key=lambda p: float(self.best_k_models[p]))
            self.kth_value = self.best_k_models[self.kth_best_model_path]
        self.best_model_path = best(self.best_k_models, key=lambda p: float(self.best_k_models[p]))
        self.best_model_score = self.best_k_models[self.best_model_path]
        if self.verbose and trainer.is_global_zero:
            print(
                f"Epoch {int(candidates['epoch'])}, global step {int(candidates['step'])}: {self.monitor!r} reached "
                f"{float(current):0.5f} (best {float(self.best_model_score):0.5f}), saving model to {path!r} "
                f"as top {k}"
            )
        self._save_checkpoint(trainer, path)
        if dropped and self._removable(trainer, dropped, path):
            self._remove_checkpoint(trainer, dropped)

    def _save_none_monitor_checkpoint(self, trainer: Any, candidates: dict[str, Any]) -> None:
        path = self._free_name(candidates, trainer, self.best_model_path)
        previous, self.best_model_path = self.best_model_path, path
        self._save_checkpoint(trainer, path)
        if self.save_top_k == 1 and previous and self._removable(trainer, previous, path):
            self._remove_checkpoint(trainer, previous)

    def _save_last_checkpoint(self, trainer: Any, candidates: dict[str, Any]) -> None:
        if not self.save_last:
            return
        path = self._free_name(candidates, trainer, self.last_model_path, last=True)
        previous, self.last_model_path = self.last_model_path, path
        if self.save_last == "link" and self._last_checkpoint_saved and self.save_top_k != 0:
            self._link_checkpoint(trainer, self._last_checkpoint_saved, path)
        else:
            self._save_checkpoint(trainer, path)
        if previous and self._removable(trainer, previous, path):
            self._remove_checkpoint(trainer, previous)

    def _save_checkpoint(self, trainer: Any, path: str) -> None:
        trainer.save_checkpoint(path, self.save_weights_only)
        self._last_global_step_saved = trainer.global_step
        self._last_checkpoint_saved = path
        if trainer.is_global_zero:  # trackers upload checkpoints from here (Lightning's logger protocol)
            for logger in trainer.loggers:
                after_save = getattr(logger, "after_save_checkpoint", None)
                if callable(after_save):
                    after_save(self)

    def _remove_checkpoint(self, trainer: Any, filepath: str) -> None:
        """Every removal goes through here (the strategy removes it on the right process), so a subclass that
        keeps some files (overriding Lightning's ``_remove_checkpoint``) keeps them."""
        trainer.strategy.remove_checkpoint(filepath)

    @staticmethod
    def _link_checkpoint(trainer: Any, target: str, link: str) -> None:
        if trainer.is_global_zero and os.path.abspath(target) != os.path.abspath(link):
            if os.path.islink(link) or os.path.isfile(link):
                os.remove(link)
            elif os.path.isdir(link):
                shutil.rmtree(link)
            try:
                os.symlink(os.path.relpath(target, os.path.dirname(link)), link)
            except OSError:  # no right to make links here (Windows): a copy does the job
                shutil.copy(target, link)
        trainer.strategy.barrier()

    def _removable(self, trainer: Any, previous: str, current: str) -> bool:
        """A file is removed only when it is not the new one, not the resumed one, and inside ``dirpath``."""
        if previous == current:
            return False
        if _is_remote(previous):
            return True
        old = Path(previous).absolute()
        resumed = getattr(trainer, "ckpt_path", None)
        if resumed is not None and old == Path(resumed).absolute():
            return False
        return self.dirpath is not None and Path(self.dirpath).absolute() in old.parents

    # ---- state ----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "best_model_score": self.best_model_score,
            "best_model_path": self.best_model_path,
            "current_score": self.current_score,
            "dirpath": self.dirpath,
            "best_k_models": dict(self.best_k_models),
            "kth_best_model_path": self.kth_best_model_path,
            "kth_value": self.kth_value,
            "last_model_path": self.last_model_path,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved_dirpath = state_dict.get("dirpath", self.dirpath)
        if self.dirpath == saved_dirpath:
            self.best_model_score = state_dict["best_model_score"]
            self.kth_best_model_path = state_dict.get("kth_best_model_path", self.kth_best_model_path)
            self.kth_value = state_dict.get("kth_value", self.kth_value)
            self.best_k_models = dict(state_dict.get("best_k_models", self.best_k_models))
            self.last_model_path = state_dict.get("last_model_path", self.last_model_path)
        else:
            warnings.warn(
                f"The dirpath has changed from {saved_dirpath!r} to {self.dirpath!r}, therefore `best_model_score`, "
                "`kth_best_model_path`, `kth_value`, `last_model_path` and `best_k_models` won't be reloaded (they "
                "describe files of the old folder). Only `best_model_path` will be reloaded.",
                stacklevel=2,
            )
        self.best_model_path = state_dict["best_model_path"]

    def to_yaml(self, filepath: str | os.PathLike[str] | None = None) -> None:
        """Write ``best_k_models`` (path: score) as YAML, by default to ``dirpath/best_k_models.yaml``."""
        try:
            import yaml
        except ModuleNotFoundError as error:
            raise MisconfigurationException("ModelCheckpoint.to_yaml needs PyYAML: pip install pyyaml") from error
        if filepath is None:
            if self.dirpath is None:
                raise MisconfigurationException(
                    "ModelCheckpoint.to_yaml() without a filepath writes into dirpath, which is decided when a "
                    "fit starts: pass a filepath, or call it after fit."
                )
            filepath = os.path.join(self.dirpath, "best_k_models.yaml")
        text = yaml.dump({path: float(score) for path, score in self.best_k_models.items()})
        target = os.fspath(filepath)
        if _is_remote(target):
            import fsspec  # type: ignore[import-untyped]

            with fsspec.open(target, "w") as handle:
                handle.write(text)
        else:
            Path(target).write_text(text)
