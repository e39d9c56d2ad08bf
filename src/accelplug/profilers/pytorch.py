"""``PyTorchProfiler``: ``torch.profiler`` around the run, operator tables and Chrome traces per step kind.

The Trainer's actions become ``record_function`` ranges (``[pl][profile]<action>``) and, with
``record_module_names``, every submodule's forward a ``[pl][module]<class>: <name>`` range, so a trace shows
which hook and which layer an operator ran in. torch's profiler is stepped at the end of each
``training_step``/``validation_step``/``test_step``/``predict_step`` action; its schedule (by default
``wait=1, warmup=1, active=3``) counts each kind of step on its own (:class:`ScheduleWrapper`), and a run with
fewer than five steps of a kind records them all instead. Each recorded window is written by
``on_trace_ready`` as a Chrome trace (``{dirpath}/{stage}-{filename}-{action}.*.pt.trace.json``).
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from lightning_utilities.core.rank_zero import WarningCache
from torch import nn
from torch.autograd.profiler import EventList, record_function
from torch.profiler import ProfilerAction, ProfilerActivity, tensorboard_trace_handler

from ..errors import MisconfigurationException, did_you_mean
from .base import Profiler

if TYPE_CHECKING:
    from torch.utils.hooks import RemovableHandle

__all__ = ["PyTorchProfiler", "RegisterRecordFunction", "ScheduleWrapper", "warning_cache"]

#: The warnings this module gives once per process (Lightning's ``warning_cache``: code clears it to see them again).
warning_cache = WarningCache()

_KINETO_AVAILABLE = torch.profiler.kineto_available()
_STEP_KINDS = ("training", "validation", "test", "predict")


class RegisterRecordFunction:
    """Forward pre/post hooks on every named submodule that open and close a ``record_function`` range.

    Usable on its own: ``with RegisterRecordFunction(model): model(batch)`` inside a ``torch.profiler.profile``.
    """

    def __init__(self, model: nn.Module) -> None:
        self._model = model
        self._records: dict[str, record_function] = {}
        self._handles: dict[str, list[RemovableHandle]] = {}

    def _start_recording_forward(self, _: nn.Module, inputs: Any, record_name: str) -> Any:
        record = record_function("[pl][module]" + record_name)
        record.__enter__()  # type: ignore[no-untyped-call]
        self._records[record_name] = record
        return inputs

    def _stop_recording_forward(self, _: nn.Module, __: Any, output: Any, record_name: str) -> Any:
        record = self._records.pop(record_name, None)
        if record is not None:
            record.__exit__(None, None, None)
        return output

    def __enter__(self) -> None:
        for name, module in self._model.named_modules():
            if not name:
                continue
            record_name = f"{type(module).__module__}.{type(module).__name__}: {name}"
            self._handles[name] = [
                module.register_forward_pre_hook(partial(self._start_recording_forward, record_name=record_name)),
                module.register_forward_hook(partial(self._stop_recording_forward, record_name=record_name)),
            ]

    def __exit__(self, *exc: object) -> None:
        for handles in self._handles.values():
            for handle in handles:
                handle.remove()
        self._handles = {}


class ScheduleWrapper:
    """A ``torch.profiler`` schedule that keeps one step count per kind of step (training, validation, test,
    predict), so validation inside ``fit`` does not spend the training steps' schedule, and stops a kind
    once its window was saved."""

    def __init__(self, schedule: Callable[[int], ProfilerAction]) -> None:
        if not _KINETO_AVAILABLE:
            raise ModuleNotFoundError("ScheduleWrapper needs torch's Kineto profiler, which this torch lacks.")
        self._schedule = schedule
        self.reset()

    def reset(self) -> None:
        self._counts = dict.fromkeys(_STEP_KINDS, 0)
        self._finished = dict.fromkeys(_STEP_KINDS, False)
        self._current_action: str | None = None
        self._prev_schedule_action: ProfilerAction | None = None
        self._start_action_name: str | None = None

    def setup(self, start_action_name: str) -> None:
        self._start_action_name = start_action_name

    def pre_step(self, current_action: str) -> None:
        self._current_action = current_action

    @property
    def _kind(self) -> str | None:
        action = self._current_action
        assert action is not None
        return next((kind for kind in _STEP_KINDS if action.endswith(f"{kind}_step")), None)

    @property
    def is_training(self) -> bool:
        return self._kind == "training"

    @property
    def is_validating(self) -> bool:
        return self._kind == "validation"

    @property
    def is_testing(self) -> bool:
        return self._kind == "test"

    @property
    def is_predicting(self) -> bool:
        return self._kind == "predict"

    @property
    def num_step(self) -> int:
        kind = self._kind
        return 0 if kind is None else self._counts[kind]

    @property
    def has_finished(self) -> bool:
        kind = self._kind
        return False if kind is None else self._finished[kind]

    def _step(self) -> None:
        kind = self._kind
        if kind is None:
            return
        fitting = (self._start_action_name or "").endswith("on_fit_start")
        if kind == "validation" and fitting and self._counts["training"] == 0:
            return  # inside fit the sanity check's steps come before any training step: they do not count
        self._counts[kind] += 1

    def __call__(self, num_step: int) -> ProfilerAction:
        if self._current_action is None or self.has_finished:
            return ProfilerAction.NONE
        self._step()
        action = self._schedule(max(self.num_step, 0))
        if self._prev_schedule_action == ProfilerAction.RECORD and action == ProfilerAction.WARMUP:
            # validation recorded, then training resumes in its warm-up: torch refuses RECORD -> WARMUP
            action = ProfilerAction.RECORD
        if action == ProfilerAction.RECORD_AND_SAVE:
            kind = self._kind
            if kind is not None:
                self._finished[kind] = True
        self._prev_schedule_action = action
        return action


@lru_cache(1)
def _default_schedule() -> Callable[[int], ProfilerAction] | None:
    """Few enough steps that recording costs little over a long run (one cached object, compared by identity)."""
    return torch.profiler.schedule(wait=1, warmup=1, active=3) if _KINETO_AVAILABLE else None


def _cuda_available() -> bool:
    from ..accelerators.cuda import CUDAAccelerator  # counts without initialising CUDA (a fork stays safe)

    return CUDAAccelerator.is_available()


def _default_sort_by_key(profiler_kwargs: dict[str, Any]) -> str:
    activities = profiler_kwargs.get("activities") or []
    cuda = bool(profiler_kwargs.get("use_cuda")) or ProfilerActivity.CUDA in activities
    if not activities and not cuda:
        cuda = _cuda_available()
    return f"{'cuda' if cuda else 'cpu'}_time_total"


class PyTorchProfiler(Profiler):
    """``torch.profiler`` driven by the Trainer: see the module docstring. ``**profiler_kwargs`` go to
    ``torch.profiler.profile`` (``record_shapes``, ``profile_memory``, ``with_stack``, ``schedule``,
    ``activities``, ``on_trace_ready``...); ``table_kwargs`` to ``EventList.table`` for the report."""

    STEP_FUNCTIONS: ClassVar[set[str]] = {"training_step", "validation_step", "test_step", "predict_step"}
    AVAILABLE_SORT_KEYS: ClassVar[set[str]] = {
        "cpu_time",
        "cuda_time",
        "cpu_time_total",
        "cuda_time_total",
        "cpu_memory_usage",
        "cuda_memory_usage",
        "self_cpu_memory_usage",
        "self_cuda_memory_usage",
        "count",
    }

    def __init__(
        self,
        dirpath: str | Path | None = None,
        filename: str | None = None,
        group_by_input_shapes: bool = False,
        emit_nvtx: bool = False,
        export_to_chrome: bool = True,
        row_limit: int = 20,
        sort_by_key: str | None = None,
        record_module_names: bool = True,
        table_kwargs: dict[str, Any] | None = None,
        **profiler_kwargs: Any,
    ) -> None:
        # what teardown releases exists before any argument is checked: an object whose __init__ raised is still
        # deleted, and __del__'s teardown must find nothing to release rather than a missing attribute
        self.profiler: Any = None
        self.function_events: EventList | None = None
        self._lightning_module: nn.Module | None = None  # handed over by the Trainer when a call starts
        self._register: RegisterRecordFunction | None = None
        self._parent_profiler: AbstractContextManager[Any] | None = None
        self._recording_map: dict[str, record_function] = {}
        self._schedule: ScheduleWrapper | None = None
        super().__init__(dirpath=dirpath, filename=filename)
        self._group_by_input_shapes = group_by_input_shapes and profiler_kwargs.get("record_shapes", False)
        self._emit_nvtx = emit_nvtx
        self._export_to_chrome = export_to_chrome
        if isinstance(row_limit, bool) or not isinstance(row_limit, int) or (row_limit < 0 and row_limit != -1):
            raise MisconfigurationException(
                f"PyTorchProfiler(row_limit={row_limit!r}): expected an int >= 0, or -1 for no limit."
            )
        self._row_limit = row_limit
        self._sort_by_key = sort_by_key or _default_sort_by_key(profiler_kwargs)
        self._record_module_names = record_module_names
        self._profiler_kwargs = profiler_kwargs
        self._table_kwargs = dict(table_kwargs) if table_kwargs is not None else {}
        self._has_on_trace_ready = "on_trace_ready" in profiler_kwargs
        self._export_to_flame_graph = bool(profiler_kwargs.get("export_to_flame_graph", False))
        self._metric = profiler_kwargs.get("metric", "self_cpu_time_total")
        if _KINETO_AVAILABLE:
            self._init_kineto(profiler_kwargs)
        if self._sort_by_key not in self.AVAILABLE_SORT_KEYS:
            raise MisconfigurationException(
                f"PyTorchProfiler(sort_by_key={self._sort_by_key!r}) is not a sort key."
                f"{did_you_mean(self._sort_by_key, self.AVAILABLE_SORT_KEYS)}"
                f" Accepted: {', '.join(sorted(self.AVAILABLE_SORT_KEYS))}."
            )
        self._check_table_kwargs()

    def _check_table_kwargs(self) -> None:
        valid = set(inspect.signature(EventList.table).parameters) - {"self", "sort_by", "row_limit"}
        for key in self._table_kwargs:
            if key in {"sort_by", "row_limit"}:
                raise KeyError(
                    f"Found invalid table_kwargs key: {key}. This is already a positional argument of the Profiler."
                )
            if key not in valid:
                raise KeyError(f"Found invalid table_kwargs key: {key}. Should be within {valid}.")

    def _init_kineto(self, profiler_kwargs: dict[str, Any]) -> None:
        has_schedule = "schedule" in profiler_kwargs
        schedule = profiler_kwargs.get("schedule")
        if schedule is not None:
            if not callable(schedule):
                raise MisconfigurationException(
                    f"PyTorchProfiler(schedule={schedule!r}): expected a callable, e.g. "
                    "torch.profiler.schedule(wait=1, warmup=1, active=3)."
                )
            action = schedule(0)
            if not isinstance(action, ProfilerAction):
                raise MisconfigurationException(
                    f"PyTorchProfiler(schedule=...) returned {action!r} for step 0: expected a "
                    "torch.profiler.ProfilerAction (torch.profiler.schedule(...) makes such a function)."
                )
        chosen = schedule if has_schedule else _default_schedule()
        self._schedule = ScheduleWrapper(chosen) if chosen is not None else None
        self._profiler_kwargs["schedule"] = self._schedule
        activities = profiler_kwargs.get("activities")
        self._profiler_kwargs["activities"] = activities or self._default_activities()
        self._profiler_kwargs["with_stack"] = bool(profiler_kwargs.get("with_stack")) or self._export_to_flame_graph

    def _default_activities(self) -> list[ProfilerActivity]:
        if not _KINETO_AVAILABLE:
            return []
        return [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if _cuda_available() else [])

    @property
    def _total_steps(self) -> float:
        """How many steps of the current kind the call will take (the schedule is replaced below five)."""
        assert self._schedule is not None and self._lightning_module is not None
        trainer: Any = getattr(self._lightning_module, "trainer", None)
        if trainer is None:
            return float("inf")
        if self._schedule.is_training:
            return float(trainer.num_training_batches)
        if self._schedule.is_validating:
            return float(sum(trainer.num_val_batches) + sum(trainer.num_sanity_val_batches))
        if self._schedule.is_testing:
            return float(sum(trainer.num_test_batches))
        if self._schedule.is_predicting:
            return float(sum(trainer.num_predict_batches))
        raise NotImplementedError("Unsupported schedule")

    def _should_override_schedule(self) -> bool:
        return (
            self._lightning_module is not None
            and self._schedule is not None
            and self._schedule._schedule is _default_schedule()
            and self._total_steps < 5
        )

    def start(self, action_name: str) -> None:
        if self.profiler is None:
            autograd: Any = torch.autograd
            if autograd._profiler_enabled():  # another profiler left running (never described)
                autograd._disable_profiler()
            if self._schedule is not None:
                self._schedule.setup(action_name)
            self._create_profilers()
            created: Any = self.profiler
            entered = created.__enter__()
            if entered is not None:
                self.profiler = entered
            if self._parent_profiler is not None:
                self._parent_profiler.__enter__()
        if self._lightning_module is not None and self._register is None and self._record_module_names:
            self._register = RegisterRecordFunction(self._lightning_module)
            self._register.__enter__()
        if self.profiler is not None and action_name not in self._recording_map:
            recording = record_function("[pl][profile]" + action_name)
            recording.__enter__()  # type: ignore[no-untyped-call]
            self._recording_map[action_name] = recording

    def stop(self, action_name: str) -> None:
        recording = self._recording_map.pop(action_name, None)
        if recording is not None:
            recording.__exit__(None, None, None)
        if not _KINETO_AVAILABLE or self._emit_nvtx:
            return
        if self.profiler is None or not any(action_name.endswith(step) for step in self.STEP_FUNCTIONS):
            return
        if self._schedule is not None:
            self._schedule.pre_step(action_name)
        if self._should_override_schedule():
            warning_cache.warn(
                "The PyTorch Profiler default schedule will be overridden as there is not enough "
                "steps to properly record traces."
            )
            self._schedule = None
            self.profiler.schedule = torch.profiler.profiler._default_schedule_fn
        if not self._has_on_trace_ready:
            self.profiler.on_trace_ready = partial(self._on_trace_ready, action_name)
        if self._schedule is not None:
            self.profiler.step_num = self._schedule.num_step
        self.profiler.step()
        self.profiler.add_metadata("Framework", "pytorch-lightning")

    def _on_trace_ready(self, action_name: str, profiler: Any) -> None:
        if self.dirpath is None:
            warnings.warn("The PyTorchProfiler failed to export trace as `dirpath` is None", stacklevel=2)
            return
        folder = os.fspath(self.dirpath)
        if self._export_to_chrome:
            handler = tensorboard_trace_handler(folder, self._prepare_filename(action_name=action_name, extension=""))
            handler(profiler)
        if self._export_to_flame_graph:
            path = os.path.join(folder, self._prepare_filename(action_name=action_name, extension=".stack"))
            profiler.export_stacks(path, metric=self._metric)

    def summary(self) -> str:
        if not self._profiler_kwargs.get("enabled", True) or self._emit_nvtx:
            return ""
        self._delete_profilers()
        if not self.function_events:
            return ""
        events: Any = self.function_events
        if self._export_to_chrome and not _KINETO_AVAILABLE:
            filename = f"{self.local_rank}_trace.json"
            events.export_chrome_trace(
                filename if self.dirpath is None else os.path.join(os.fspath(self.dirpath), filename)
            )
        data = events.key_averages(group_by_input_shapes=self._group_by_input_shapes)
        table = data.table(sort_by=self._sort_by_key, row_limit=self._row_limit, **self._table_kwargs)
        return self._stats_to_str({"records": table})

    def _create_profilers(self) -> None:
        if self.profiler is not None:
            return
        if self._emit_nvtx:
            if not _cuda_available():
                raise MisconfigurationException(
                    "PyTorchProfiler(emit_nvtx=True) emits NVTX ranges for NVIDIA's Nsight/nvprof and needs a CUDA "
                    "GPU; none is visible here. Use emit_nvtx=False on this machine."
                )
            if self._parent_profiler is None:
                self._parent_profiler = torch.cuda.profiler.profile()
            self.profiler = self._create_profiler(torch.autograd.profiler.emit_nvtx)
        else:
            self._parent_profiler = None
            kind = torch.profiler.profile if _KINETO_AVAILABLE else torch.autograd.profiler.profile
            self.profiler = self._create_profiler(kind)

    def _create_profiler(self, kind: Any) -> Any:
        accepted = inspect.signature(kind.__init__).parameters
        return kind(**{k: v for k, v in self._profiler_kwargs.items() if k in accepted})

    def _cache_functions_events(self) -> None:
        if self._emit_nvtx:
            return
        self.function_events = self.profiler.events() if _KINETO_AVAILABLE else self.profiler.function_events

    def _delete_profilers(self) -> None:
        if self.profiler is not None:
            self.profiler.__exit__(None, None, None)
            self._cache_functions_events()
            self.profiler = None
        if self._schedule is not None:
            self._schedule.reset()
        if self._parent_profiler is not None:
            self._parent_profiler.__exit__(None, None, None)
            self._parent_profiler = None
        if self._register is not None:
            self._register.__exit__(None, None, None)
            self._register = None

    def teardown(self, stage: str | None) -> None:
        self._delete_profilers()
        for action in list(self._recording_map):
            self.stop(action)
        self._recording_map = {}
        super().teardown(stage=stage)
