"""Which checkpoint a call restores: the one resume-path resolver of ``fit``, ``validate``, ``test`` and ``predict``.

:func:`choose_checkpoint` turns what a call was asked (its ``ckpt_path``, a path set on ``trainer.ckpt_path``,
or nothing) into a file, in Lightning 2.6's order and with its warnings and errors:

1. ``trainer.ckpt_path = path`` set by the user is restored by every call until reset; a call's own
   ``ckpt_path`` wins over it (with Lightning's warning) and clears it.
2. ``fit`` only: in a Slurm task, ``None`` is the newest ``hpc_ckpt_N.ckpt`` the requeue wrote
   (:mod:`..process.requeue`), and ``"hpc"`` asks for it; in a worker torchrun's elastic agent restarted
   (``TORCHELASTIC_RESTART_COUNT`` > 0), ``None`` is ``"auto"``; with an ``OnExceptionCheckpoint``, ``None``
   is ``"last"`` (Lightning's warning says so).
3. ``None`` with a model given loads nothing; ``validate()``/``test()``/``predict()`` without a model are the
   model of the previous call with the best weights of its fit (``"best"``, with Lightning's warning).
4. ``"best"`` is the first ``ModelCheckpoint``'s ``best_model_path`` (``ValueError`` when there is none);
   ``"last"`` the newest ``last*.ckpt`` in the ``ModelCheckpoint`` folders or the on-exception file (none:
   Lightning's warning, and nothing is loaded); ``"auto"`` (accelplug's) the newest checkpoint of any name
   under every folder of the run that verifies (``lightning_logs/version_N/checkpoints`` of earlier
   Trainers included: each attempt of a restarted job picks a fresh version), else nothing; a path must
   name a file (``FileNotFoundError`` otherwise; ``"registry"``/``"registry:NAME"``, Lightning's model registry,
   which accelplug does not download from, is such a path).

Rank 0 looks for ``"last"``/``"auto"`` candidates and tells the others, so every rank restores the same file.
When ``fit`` chose by itself (a restart, ``"auto"``), one line on rank 0 says which file.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...envvars import env_int
from ...errors import CheckpointNotFoundError, MisconfigurationException
from ..process.requeue import HPC_PREFIX, hpc_resume_path
from .format import checked_path, find_last_checkpoint

if TYPE_CHECKING:
    from ...strategies.base import Strategy

__all__ = ["RESTART_ENV", "Asked", "Choice", "ResumeHost", "choose_checkpoint", "restart_count"]

#: Set by torchrun's agent in every worker: 0 on the first attempt, then 1, 2, ... after each restart.
RESTART_ENV = "TORCHELASTIC_RESTART_COUNT"


class ResumeHost(Protocol):
    """What the resolver reads of the Trainer (its state keeps ``ckpt_path`` and whether the user set it)."""

    state: Any
    callbacks: list[Any]

    @property
    def is_global_zero(self) -> bool: ...

    @property
    def default_root_dir(self) -> str: ...

    @property
    def global_step(self) -> int: ...

    @property
    def fast_dev_run(self) -> bool | int: ...

    @property
    def checkpoint_callbacks(self) -> list[Any]: ...

    def _checkpoint_folders(self) -> list[Path]: ...


@dataclass(frozen=True)
class Asked:
    """One call's question: which method, the ``ckpt_path`` it was given, whether it was given a model."""

    fn: str
    given: Any
    model_given: bool
    #: the run's cluster environment (``fit`` resumes a requeued Slurm job from its hpc checkpoint)
    environment: Any = None


def restart_count() -> int:
    """Which restart of the job this worker belongs to (0 outside torchrun and on the first attempt)."""
    return env_int(RESTART_ENV, 0, minimum=0)


def _keyword(value: Any) -> str | None:
    return value.strip().lower() if isinstance(value, str) else None


def _user_set(host: ResumeHost, asked: Asked) -> tuple[Any, bool]:
    """``(ckpt_path asked, whether it is the user's trainer.ckpt_path)``: a call's own value wins and clears it."""
    state = host.state
    if not state.ckpt_path_set:
        return asked.given, False
    if asked.given is None:
        return state.ckpt_path, True
    warnings.warn(
        f"`trainer.ckpt_path = {state.ckpt_path!r}` was called but then you passed "
        f"`trainer.{asked.fn}(ckpt_path={asked.given!r})`. The latter will be loaded.",
        UserWarning,
        stacklevel=5,
    )
    state.ckpt_path, state.ckpt_path_set = None, False
    return asked.given, False


def _on_exception_files(host: ResumeHost) -> list[str]:
    return [c.ckpt_path for c in host.callbacks if type(c).__name__ == "OnExceptionCheckpoint"]


def _implied(host: ResumeHost, asked: Asked, value: Any) -> tuple[Any, int]:
    """``(ckpt_path, restart count)``: what ``None`` means for this call (step 2 and 3 of the module doc)."""
    fn = asked.fn
    if value is None and fn == "fit":
        from ...environments.slurm import SLURMEnvironment

        in_slurm = isinstance(asked.environment, SLURMEnvironment) and SLURMEnvironment.detect()
        if in_slurm and hpc_resume_path(Path(host.default_root_dir)) is not None:
            return "hpc", 0
        if restart_count():
            return "auto", restart_count()
        if _on_exception_files(host):
            warnings.warn(
                f"`.{fn}(ckpt_path=None)` was called without a model. The last model of the previous `fit` call "
                f"will be used. You can pass `{fn}(ckpt_path='best')` to use the best model or "
                f"`{fn}(ckpt_path='last')` to use the last model. If you pass a value, this warning will be silenced.",
                UserWarning,
                stacklevel=5,
            )
            return "last", 0
    if value is not None or asked.model_given:
        return value, 0
    tip = (
        " There is also an on-exception checkpoint available, however it is used by default only when fitting."
        if _on_exception_files(host)
        else ""
    )
    warnings.warn(
        f"`.{fn}(ckpt_path=None)` was called without a model. The best model of the previous `fit` call will be "
        f"used.{tip} You can pass `.{fn}(ckpt_path='best')` to use the best model or `.{fn}(ckpt_path='last')` to "
        "use the last model. If you pass a value, this warning will be silenced.",
        UserWarning,
        stacklevel=5,
    )
    return "best", 0


def _best(host: ResumeHost, fn: str) -> str:
    callbacks = host.checkpoint_callbacks
    if len(callbacks) > 1:
        warnings.warn(
            f'`.{fn}(ckpt_path="best")` is called with Trainer configured with multiple `ModelCheckpoint` callbacks. '
            "It will use the best checkpoint path from first checkpoint callback.",
            UserWarning,
            stacklevel=5,
        )
    if not callbacks:
        raise MisconfigurationException(
            f'`.{fn}(ckpt_path="best")` is set but `ModelCheckpoint` is not configured. Add a '
            "ModelCheckpoint(monitor=...) to the callbacks, or pass a checkpoint file."
        )
    best = callbacks[0].best_model_path
    if not best:
        if host.fast_dev_run:
            raise MisconfigurationException(
                f'You cannot execute `.{fn}(ckpt_path="best")` with `fast_dev_run=True`. Please pass an exact '
                f"checkpoint path to `.{fn}(ckpt_path=...)`"
            )
        raise MisconfigurationException(
            f'`.{fn}(ckpt_path="best")` is set but `ModelCheckpoint` is not configured to save the best model: it '
            "has saved none (save_top_k=0, or no fit yet). Pass a checkpoint file, or ckpt_path='last'."
        )
    return str(best)


def _last_files(host: ResumeHost) -> list[str]:
    """Lightning's candidates for ``"last"``: each ModelCheckpoint's ``last*.ckpt`` files, the on-exception file."""
    found = [path for path in _on_exception_files(host) if os.path.isfile(path)]
    for callback in host.checkpoint_callbacks:
        folder, last = getattr(callback, "dirpath", None), getattr(callback, "CHECKPOINT_NAME_LAST", None)
        if folder is None and hasattr(callback, "folder"):  # not set up yet: where it will write, as Lightning
            folder = callback.folder(host)
        if folder is None or last is None or "://" in str(folder) or not os.path.isdir(folder):
            continue
        pattern = re.compile(rf"^{re.escape(last)}(-(\d+))?{re.escape(callback.FILE_EXTENSION)}$")
        found += [os.path.join(folder, name) for name in os.listdir(folder) if pattern.match(name)]
    return sorted(set(found), key=lambda p: (os.path.getmtime(p), p))


def _newest(host: ResumeHost, strategy: Strategy, asked: Asked, keyword: str) -> Path | str | None:
    """``"last"``/``"auto"``: the newest candidate that verifies, looked for by rank 0 and told to the others."""
    found: Path | str | None = None
    if strategy.is_global_zero:
        device = strategy.checkpoint_map_location()
        if keyword == "auto":
            found = find_last_checkpoint(host._checkpoint_folders(), device)
        else:
            files = _last_files(host)
            found = find_last_checkpoint([], device, files=[Path(f) for f in files])
            found = None if found is None else next(f for f in files if Path(f) == found)
    found = strategy.broadcast_object(found)
    if found is None and keyword == "last":
        warnings.warn(
            f'.{asked.fn}(ckpt_path="last") is set, but there is no last checkpoint available. No checkpoint will '
            "be loaded. HINT: Set `ModelCheckpoint(..., save_last=True)`.",
            UserWarning,
            stacklevel=5,
        )
    return found


def _file(host: ResumeHost, strategy: Strategy, asked: Asked, value: Any) -> Path | str | None:
    """The file ``value`` names: a keyword resolved, a path checked."""
    keyword = _keyword(value)
    if keyword == "best":
        return _best(host, asked.fn)
    if keyword in ("last", "auto"):
        return _newest(host, strategy, asked, keyword)
    if keyword == "hpc":
        found = hpc_resume_path(Path(host.default_root_dir))
        if found is None:
            raise MisconfigurationException(
                f'`.{asked.fn}(ckpt_path="hpc")` is set but no HPC checkpoint was found: no {HPC_PREFIX}N.ckpt in '
                f"{host.default_root_dir} (default_root_dir); a Slurm job saves one there when it is requeued on its "
                f"signal. Please pass an exact checkpoint path to `.{asked.fn}(ckpt_path=...)`, or 'last'."
            )
        return found
    if keyword is not None and (keyword == "registry" or keyword.startswith("registry:")) and not os.path.exists(value):
        raise CheckpointNotFoundError(
            f"Checkpoint file not found: {value} (ckpt_path={value!r} names a model in Lightning's model registry, "
            "which Lightning downloads with the `litmodels` package; accelplug does not download from it. Download "
            f"the checkpoint and pass its file: `.{asked.fn}(ckpt_path=PATH)`)."
        )
    if keyword == "":
        raise MisconfigurationException(
            f"`.{asked.fn}()` found no path for the best weights: {value!r}. Please specify a path for a checkpoint "
            f"`.{asked.fn}(ckpt_path=PATH)`"
        )
    return checked_path(value)


@dataclass(frozen=True)
class Choice:
    """The checkpoint a call restores (``path``; None: none) and why, for the line ``fit`` prints."""

    path: Path | str | None
    asked: Any = None
    restart: int = 0

    @property
    def as_given(self) -> str | os.PathLike[str] | None:
        """The checkpoint as Lightning names it to a ``CheckpointIO`` of the user's: the path the user wrote (a str
        stays a str), or the file a keyword found, as a str."""
        if self.path is None:
            return None
        asked = self.asked
        if isinstance(asked, os.PathLike) or (
            isinstance(asked, str) and _keyword(asked) not in ("best", "last", "auto", "hpc")
        ):
            return asked
        return os.fspath(self.path)

    def announce(self, host: ResumeHost) -> None:
        """One line on rank 0 when ``fit`` chose where to start by itself (a restart, or ``"auto"``); call it
        after the restore, so the line gives the step resumed from."""
        if self.restart:
            why = f"restart {self.restart} of this job ({RESTART_ENV}={self.restart})"
        elif _keyword(self.asked) == "auto":
            why = 'ckpt_path="auto"'
        else:
            return
        if not host.is_global_zero:
            return
        if self.path is not None:
            line = f"accelplug: {why}: resuming from {self.path} (step {host.global_step})."
        else:
            root = host.default_root_dir
            line = f"accelplug: {why}: no checkpoint under {root} verifies; training from the start."
        print(line, file=sys.stderr, flush=True)


def choose_checkpoint(host: ResumeHost, strategy: Strategy, asked: Asked) -> Choice:
    """The checkpoint this call restores, recorded as ``trainer.ckpt_path`` (as given, for a path); the rules are
    this module's docstring."""
    value, user_set = _user_set(host, asked)
    value, restart = _implied(host, asked, value)
    path = None if value is None else _file(host, strategy, asked, value)
    if not user_set:
        given_path = _keyword(value) not in ("best", "last", "auto", "hpc") and isinstance(value, (str, os.PathLike))
        shown = os.fspath(value) if given_path and path is not None else path
        host.state.ckpt_path = None if shown is None else str(shown)
    return Choice(path, value, restart)
