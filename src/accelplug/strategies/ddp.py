"""Distributed data parallel: one process per device, gradients all-reduced by torch.distributed.

Each process is started by ``torch.distributed.run`` (``accelplug launch`` or plain ``torchrun``),
which sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT``; the process
group is created from those variables with the accelerator's own backend (gloo for the CPU, nccl for
CUDA), so the same script runs on one machine or many.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import torch
from torch.distributed.constants import default_pg_timeout
from torch.nn.parallel import DistributedDataParallel

from ..envvars import env_float, env_int
from ..errors import MisconfigurationException, did_you_mean
from . import DDP_PRESET_SETTINGS
from .parallel import ParallelStrategy
from .prepared import StepRouter

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from .optimizers import OptimizerSetup

__all__ = [
    "DDP_FORK_NAMES",
    "DDP_PRESETS",
    "DDPStrategy",
    "attempt_store",
    "collective_timeout",
    "ddp_keyword_names",
    "launched_by_torchrun",
]

DDP_TIMEOUT_ENV = "ACCELPLUG_DDP_TIMEOUT_S"


def collective_timeout() -> timedelta:
    """How long a collective may wait for a peer (``ACCELPLUG_DDP_TIMEOUT_S``, default 300 s).

    Short enough that a dead peer does not hang the job for half an hour (torch's default), long
    enough for a slow first CUDA/NCCL initialisation. Read when a process group is created, so a bad
    value fails that run with a clear message, not ``import accelplug``.
    """
    return timedelta(seconds=env_float(DDP_TIMEOUT_ENV, 300.0, minimum=1.0, maximum=7 * 24 * 3600.0))


_OWN_GROUPS: set[int] = set()
"""``id()`` of the default process groups this package created (not the groups: a reference held here
would keep a destroyed group's threads alive until interpreter shutdown, which is what aborts)."""


def _release_at_clean_exit() -> None:
    """Destroy the process group accelplug created, as torch asks of every program, when the process ends cleanly.

    A gloo group whose C++ object is still alive when the interpreter shuts down can abort the process
    ("terminate called without an active exception", SIGABRT, exit -6) after training succeeded. The
    group is destroyed and the garbage it was reachable from (a sharded model's device mesh) collected
    while the interpreter still runs. Skipped when the process is leaving on an unhandled exception
    (``sys.last_value``): a communicator in a broken state may block its destruction, and the job is
    failing with that exception anyway.
    """
    import gc

    import torch.distributed as dist

    if not _OWN_GROUPS or getattr(sys, "last_value", None) is not None:
        return
    if dist.is_initialized() and id(dist.group.WORLD) in _OWN_GROUPS:
        dist.destroy_process_group()
    _OWN_GROUPS.clear()
    gc.collect()


def adopt_process_group() -> None:
    """Mark the default group just created by this package as ours to release at a clean exit."""
    import torch.distributed as dist

    if not _OWN_GROUPS:
        atexit.register(_release_at_clean_exit)
    _OWN_GROUPS.add(id(dist.group.WORLD))


def launched_by_torchrun() -> bool:
    """Whether this process is a worker started by ``torch.distributed.run`` (or a compatible launcher)."""
    return all(name in os.environ for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"))


def attempt_store(timeout: timedelta) -> Any:
    """torchrun's job store, seen through a prefix of this restart attempt; None when the agent hosts none.

    torchrun's static rendezvous keeps one store for the whole job, and the process group's keys
    (gloo's listening addresses, NCCL's unique id) carry no attempt number, so after a restart
    (``--max-restarts``) a worker can read the previous attempt's address and fail to connect
    ("Connection refused"; pytorch/pytorch#135712). Prefixing them with ``TORCHELASTIC_RESTART_COUNT``
    (the same on every worker of one agent) keeps each attempt's keys apart.
    """
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return None
    from torch.distributed import PrefixStore, TCPStore  # type: ignore[attr-defined]

    attempt = env_int("TORCHELASTIC_RESTART_COUNT", 0, minimum=0)
    store = TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        int(os.environ["WORLD_SIZE"]),
        is_master=False,
        timeout=timeout,
    )
    return PrefixStore(f"accelplug/attempt_{attempt}/", store)


#: ``torch.nn.parallel.DistributedDataParallel`` arguments the strategy sets itself.
_SET_BY_STRATEGY = ("module", "device_ids")
START_METHODS = ("popen", "spawn", "fork", "forkserver")


def ddp_keyword_names() -> tuple[str, ...]:
    """The ``DistributedDataParallel`` arguments a user may pass through the strategy (``static_graph``...)."""
    import inspect

    from torch.nn.parallel import DistributedDataParallel

    names = inspect.signature(DistributedDataParallel.__init__).parameters
    return tuple(n for n in names if n != "self" and n not in _SET_BY_STRATEGY)


def _check_start_method(start_method: object) -> str:
    if start_method not in START_METHODS:
        raise MisconfigurationException(
            f"DDPStrategy(start_method={start_method!r}) is invalid. Accepted: "
            f"{', '.join(repr(m) for m in START_METHODS)}.{did_you_mean(start_method, START_METHODS)}"
        )
    import multiprocessing

    if start_method != "popen" and start_method not in multiprocessing.get_all_start_methods():
        raise MisconfigurationException(
            f"DDPStrategy(start_method={start_method!r}): this platform cannot start processes with "
            f"{start_method!r} (it has {', '.join(multiprocessing.get_all_start_methods())}); use strategy='ddp' "
            "(a launcher starts one process per device) or strategy='ddp_spawn'."
        )
    return str(start_method)


class DDPStrategy(ParallelStrategy):
    """One process per device, gradients averaged by torch's ``DistributedDataParallel`` (Lightning's arguments).

    ``**kwargs`` go to ``DistributedDataParallel`` as given (``find_unused_parameters=True`` for a model
    whose step leaves some parameters unused, ``static_graph``, ``gradient_as_bucket_view``,
    ``bucket_cap_mb``...); a name torch does not take is refused here, when the strategy is built, rather
    than by torch inside the first fit. ``ddp_comm_hook`` (wrapped by ``ddp_comm_wrapper``, given
    ``ddp_comm_state``) is registered on the wrapped model; with a ``PostLocalSGDState`` and
    ``model_averaging_period`` the parameters are averaged every that many steps after each optimizer
    step (torch's ``PeriodicModelAverager``). ``timeout`` bounds every collective: left at its default,
    ``ACCELPLUG_DDP_TIMEOUT_S`` (300 s) applies, so a dead peer fails the job in minutes, not half an hour.
    """

    name = "ddp"
    description = "one process per device, gradients averaged with torch.distributed"
    is_distributed = True
    #: The launch Lightning's registered name implies (``ddp_spawn`` -> "spawn"), for the registry's questions; the
    #: preset class's builder (:func:`_preset`) passes it to the plain DDPStrategy it makes.
    preset_start_method: ClassVar[str] = "popen"
    #: ``find_unused_parameters`` preset by a registered name (``ddp_find_unused_parameters_true``), or None.
    preset_find_unused: ClassVar[bool | None] = None

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        """A preset name (``"ddp_spawn"``...) runs wherever ``"ddp"`` does."""
        if cls.preset_start_method == "popen" and cls.preset_find_unused is None:
            return None
        return "ddp" in accelerator.supported_strategies()

    def __init__(
        self,
        accelerator: Any = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
        ddp_comm_state: object | None = None,
        ddp_comm_hook: Callable[..., Any] | None = None,
        ddp_comm_wrapper: Callable[..., Any] | None = None,
        model_averaging_period: int | None = None,
        process_group_backend: str | None = None,
        timeout: timedelta | None = default_pg_timeout,
        start_method: Literal["popen", "spawn", "fork", "forkserver"] = "popen",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            accelerator=accelerator,
            parallel_devices=parallel_devices,
            cluster_environment=cluster_environment,
            checkpoint_io=checkpoint_io,
            precision_plugin=precision_plugin,
            precision=kwargs.pop("precision", None),  # Lightning Fabric's name of precision_plugin, not torch's
        )
        accepted = ddp_keyword_names()
        for option in kwargs:
            if option not in accepted:
                where = (
                    " (the strategy sets it from the selected device)"
                    if option in _SET_BY_STRATEGY
                    else did_you_mean(option, accepted)
                )
                raise MisconfigurationException(
                    f"{type(self).__name__}({option}=...) is not an argument of torch's DistributedDataParallel. "
                    f"Accepted: {', '.join(accepted)}.{where}"
                )
        self._start_method = _check_start_method(start_method)
        if ddp_comm_hook is not None and not callable(ddp_comm_hook):
            raise MisconfigurationException(
                f"DDPStrategy(ddp_comm_hook={ddp_comm_hook!r}): the hook is not callable; expected a hook such as "
                "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook."
            )
        if ddp_comm_wrapper is not None and ddp_comm_hook is None:
            raise MisconfigurationException(
                "DDPStrategy(ddp_comm_wrapper=...) wraps a communication hook, and no ddp_comm_hook was given."
            )
        self._check_model_averaging(ddp_comm_state, model_averaging_period)
        if process_group_backend is not None and (
            not isinstance(process_group_backend, str) or not process_group_backend
        ):
            raise MisconfigurationException(
                f"DDPStrategy(process_group_backend={process_group_backend!r}) is invalid: expected a "
                "torch.distributed backend name such as 'gloo' or 'nccl', or None for the accelerator's own."
            )
        if timeout is not None and not isinstance(timeout, timedelta):
            raise MisconfigurationException(
                f"DDPStrategy(timeout={timeout!r}) is invalid: expected a datetime.timedelta (or None for torch's)."
            )
        self._ddp_kwargs: dict[str, Any] = kwargs
        self._ddp_comm_state = ddp_comm_state
        self._ddp_comm_hook = ddp_comm_hook
        self._ddp_comm_wrapper = ddp_comm_wrapper
        self._model_averaging_period = model_averaging_period
        self._model_averager: Any = None
        self._requested_backend = process_group_backend
        self._process_group_backend: str | None = process_group_backend
        self._timeout = timeout
        self._num_nodes = 1
        self._created_group = False
        self._watched_fits = 0
        self._ddp: DistributedDataParallel | None = None

    @staticmethod
    def _check_model_averaging(state: object, period: object) -> None:
        if period is None:
            return
        if isinstance(period, bool) or not isinstance(period, int) or period < 1:
            raise MisconfigurationException(
                f"DDPStrategy(model_averaging_period={period!r}) is invalid: expected a positive int (steps)."
            )
        from torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook import PostLocalSGDState

        if not isinstance(state, PostLocalSGDState):
            raise MisconfigurationException(
                f"DDPStrategy(model_averaging_period={period}) averages models for post-local SGD, which needs "
                "ddp_comm_state=PostLocalSGDState(...) and ddp_comm_hook=post_localSGD_hook "
                "(torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook)."
            )

    def __repr__(self) -> str:
        shown = [f"{k}={v!r}" for k, v in self._ddp_kwargs.items()]
        if self._start_method != "popen":
            shown.append(f"start_method={self._start_method!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    # ---- Lightning's read-only views -------------------------------------------------------------
    @property
    def process_group_backend(self) -> str | None:
        """The torch.distributed backend: the one asked for, else (once set up) the accelerator's own."""
        return self._process_group_backend

    @property
    def start_method(self) -> str:
        """How the processes are started: "popen" (a launcher runs the script per device), "spawn", "fork"..."""
        return self._start_method

    @property
    def timeout(self) -> timedelta | None:
        """The collective timeout asked for (torch's default object when left alone)."""
        return self._timeout

    @property
    def num_nodes(self) -> int:
        return self._num_nodes

    @num_nodes.setter
    def num_nodes(self, num_nodes: int) -> None:
        self._num_nodes = num_nodes

    @property
    def num_processes(self) -> int:
        """Processes on this node (the launcher's ``LOCAL_WORLD_SIZE``)."""
        return int(os.environ.get("LOCAL_WORLD_SIZE", str(max(1, self.world_size // max(1, self._num_nodes)))))

    # ---- the process -----------------------------------------------------------------------------
    def backend_for(self, accelerator: Accelerator, device: torch.device) -> str:
        """The torch.distributed backend for this run: ``process_group_backend`` if given, else the
        accelerator's own (gloo on the CPU, nccl on CUDA)."""
        if self._requested_backend is not None:
            return self._requested_backend
        backend = accelerator.distributed_backend
        if backend is None:
            raise MisconfigurationException(
                f"strategy={self.name!r} needs a torch.distributed backend, and accelerator "
                f"{accelerator.name!r} has none."
            )
        return backend

    def _get_process_group_backend(self) -> str:
        """Lightning's name: the backend this strategy's group uses, before any setup too (the one asked for, else
        the accelerator's own, else torch's for the device type: nccl on CUDA, gloo elsewhere)."""
        if self._requested_backend is not None:
            return self._requested_backend
        if self.accelerator is not None and self.accelerator.distributed_backend is not None:
            return str(self.accelerator.distributed_backend)
        device = self.root_device
        return "nccl" if device is not None and device.type == "cuda" else "gloo"

    def _collective_timeout(self) -> timedelta | None:
        """``timeout`` when the user gave one; at Lightning's default object, ``ACCELPLUG_DDP_TIMEOUT_S``."""
        return collective_timeout() if self._timeout is default_pg_timeout else self._timeout

    def needs_launcher(self, processes: int) -> bool:
        """Several processes need starting; one makes a process group of one in this process (as Lightning's)."""
        return processes > 1

    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        """Join the launcher's process group, or make one of one process here (one device, nothing launched:
        the Trainer and Fabric start or re-launch processes wherever several are needed)."""
        accelerator, device = self._environment_target(accelerator, device)
        import torch.distributed as dist

        backend = self.backend_for(accelerator, device)
        super().setup_environment(accelerator, device)
        self._process_group_backend = backend
        if dist.is_initialized():
            return
        _check_backend(backend)
        options: dict[str, Any] = {"backend": backend, "timeout": self._collective_timeout()}
        if device.type != "cpu":
            options["device_id"] = device  # lets NCCL bind eagerly and fail fast on a bad device
        if launched_by_torchrun():
            store = attempt_store(options["timeout"] or collective_timeout())
            if store is not None:
                options.update(store=store, rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        else:
            options.update(store=dist.HashStore(), rank=0, world_size=1)  # type: ignore[attr-defined]
        dist.init_process_group(**options)
        # Kept alive for validate/predict after fit; released when the process ends cleanly, or
        # earlier by ``trainer.strategy.destroy_process_group()``.
        adopt_process_group()
        self._created_group = True

    def destroy_process_group(self) -> None:
        """Release the process group this strategy created (the end of a script; not between runs)."""
        import torch.distributed as dist

        if self._created_group and dist.is_initialized():
            dist.destroy_process_group()
            self._created_group = False

    @property
    def world_size(self) -> int:
        """The run's process count: the process group's, else the launcher's ``WORLD_SIZE``, else the plan (this
        node's devices x nodes), which Lightning answers before its processes start and a spawning parent keeps."""
        import torch.distributed as dist

        if dist.is_initialized():
            return dist.get_world_size()
        if "WORLD_SIZE" in os.environ:
            return int(os.environ["WORLD_SIZE"])
        devices = self.parallel_devices
        return len(devices) * max(1, self._num_nodes) if devices else 1

    @property
    def global_rank(self) -> int:
        import torch.distributed as dist

        return dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))

    @property
    def local_rank(self) -> int:
        return int(os.environ.get("LOCAL_RANK", "0"))

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module:
        device = self._device()
        device_ids = None if device.type == "cpu" else [device]
        wrapped = _StepDDP(_ManualRouter(module), device_ids=device_ids, **self._ddp_kwargs)
        self._ddp = wrapped
        if self._ddp_comm_hook is not None:
            hook = self._ddp_comm_hook
            if self._ddp_comm_wrapper is not None:
                hook = self._ddp_comm_wrapper(hook)
            wrapped.register_comm_hook(state=self._ddp_comm_state, hook=hook)
        return wrapped

    def pre_backward(self, loss: torch.Tensor) -> None:
        """Get DDP's reducer ready for the backward of ``loss`` that ``manual_backward`` is about to run.

        Under manual optimization the backward passes run inside the wrapped forward (``training_step``), and
        there may be several (a GAN's generator and discriminator); DDP prepares its reducer only after a
        forward, so each backward is announced here, with the tensors it starts from when unused parameters are
        looked for, and every one of them averages the gradients it produced (what Lightning does).
        """
        from torch.nn.parallel.distributed import _find_tensors

        ddp = self._ddp
        if ddp is None or not torch.is_grad_enabled() or not ddp.require_backward_grad_sync:
            return
        ddp.require_forward_param_sync = True
        looked_for: list[torch.Tensor] = []
        if ddp.find_unused_parameters and not ddp.static_graph:
            looked_for = list(_find_tensors(loss))  # type: ignore[no-untyped-call]
        ddp.reducer._rebuild_buckets()  # as DDP's own forward does before the first reduction
        ddp.reducer.prepare_for_backward(looked_for)

    def setup_optimizers(self, optim: OptimizerSetup) -> OptimizerSetup:
        """Start post-local SGD's periodic model averaging, when ``ddp_comm_state`` asks for it."""
        state = self._ddp_comm_state
        if state is None:
            return optim  # torch's post-local SGD module scripts functions when imported: only when it is used
        from torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook import PostLocalSGDState

        if isinstance(state, PostLocalSGDState):
            from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
            from torch.distributed.optim import PostLocalSGDOptimizer, ZeroRedundancyOptimizer

            if self._model_averaging_period is None:
                raise MisconfigurationException(
                    "DDPStrategy(ddp_comm_state=PostLocalSGDState(...)) needs model_averaging_period=N: how many "
                    "optimizer steps pass between two averagings of the models."
                )
            for optimizer in optim.optimizers:
                if isinstance(optimizer, (ZeroRedundancyOptimizer, PostLocalSGDOptimizer)):
                    raise MisconfigurationException(
                        f"DDPStrategy(model_averaging_period=...) cannot average the models of a "
                        f"{type(optimizer).__name__}, which distributes its own state; use a plain optimizer."
                    )
            self._model_averager = PeriodicModelAverager(
                period=self._model_averaging_period, warmup_steps=state.start_localSGD_iter
            )
        return optim

    def optimizer_step(
        self,
        optimizer: torch.optim.Optimizer,
        closure: Callable[[], Any] | None = None,
        precision: Any = None,
        **kwargs: Any,
    ) -> Any:
        output = super().optimizer_step(optimizer, closure, precision, **kwargs)
        if self._model_averager is not None:
            params = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
            self._model_averager.average_parameters(iter(params))
        return output

    @property
    def customizes_optimizer_step(self) -> bool:
        """Only post-local SGD adds work after a step; otherwise the lean batch path stays open."""
        return self._model_averager is not None or type(self).optimizer_step is not DDPStrategy.optimizer_step

    def prepare_dataloader(
        self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None, unrepeated: bool = False
    ) -> Any:
        from ..data.loaders import with_distributed_sampler

        share = self.distributed_sampler_kwargs
        return with_distributed_sampler(
            loader, share["num_replicas"], share["rank"], shuffle_seed, shuffle=shuffle, unrepeated=unrepeated
        )

    def _wrapped_module(self) -> Any:
        return self._ddp

    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module | None) -> Iterator[None]:
        no_sync = getattr(wrapped, "no_sync", None)
        if no_sync is None:
            yield
            return
        with no_sync():
            yield

    def reduce_mean(self, values: torch.Tensor) -> torch.Tensor:
        return self.reduce_sum(values) / self.world_size

    def reduce_sum(self, values: torch.Tensor) -> torch.Tensor:
        import torch.distributed as dist

        if not dist.is_initialized():
            return values
        reduced = values.detach().clone()
        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
        return reduced

    def reduce_any(self, flag: bool) -> bool:
        import torch.distributed as dist

        if not dist.is_initialized():
            return flag
        device = self._device() if self.root_device is not None else torch.device("cpu")
        value = torch.tensor([1.0 if flag else 0.0], device=device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item() > 0)

    def broadcast_object(self, obj: Any) -> Any:
        import torch.distributed as dist

        if not dist.is_initialized():
            return obj
        holder = [obj]
        dist.broadcast_object_list(holder, src=0)
        return holder[0]

    def barrier(self) -> None:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.barrier()

    def watch_for_hangs(self, progress: Callable[[], int]) -> contextlib.AbstractContextManager[Any]:
        """Name a rank that makes the others wait ``ACCELPLUG_HANG_TIMEOUT_S`` (see :mod:`.watchdog`)."""
        from .watchdog import HangWatchdog, hang_timeout

        timeout = hang_timeout()
        if timeout is None or self.world_size < 2:
            return contextlib.nullcontext()
        self._watched_fits += 1  # every rank runs the same fits: a per-fit namespace in the store
        return HangWatchdog(
            rank=self.global_rank,
            world_size=self.world_size,
            timeout=timeout,
            progress=progress,
            generation=self._watched_fits,
        )


class _ManualRouter(StepRouter):
    """The step router inside DDP: after a manual-optimization step, DDP is told not to wait for a backward.

    Its backward passes already ran inside the step (announced by :meth:`DDPStrategy.pre_backward`), so the
    reducer must not be armed again after the forward for a backward that never comes.
    """

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        output = super().forward(*args, **kwargs)
        if self._route is None and not getattr(self.module, "automatic_optimization", True):
            self.owner_sync(False)
        return output

    def owner_sync(self, on: bool) -> None:
        owner = self.__dict__.get("_owner")
        if owner is not None:
            owner.require_backward_grad_sync = on


class _StepDDP(DistributedDataParallel):
    """``DistributedDataParallel`` around a :class:`_ManualRouter`; gradient sync is back on after each forward."""

    def __init__(self, router: _ManualRouter, **options: Any) -> None:
        super().__init__(router, **options)
        router.__dict__["_owner"] = self  # a plain reference, not a submodule (it would be a cycle)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        router = self.module
        manual = router._route is None and not getattr(router.module, "automatic_optimization", True)
        try:
            return super().forward(*inputs, **kwargs)  # type: ignore[no-untyped-call]
        finally:
            if manual:
                self.require_backward_grad_sync = True


def _check_backend(backend: str) -> None:
    """A backend torch has (``"gloo"``, ``"nccl"``, a device map such as ``"cuda:nccl,cpu:gloo"``), or a clear error."""
    import torch.distributed as dist

    names = [part.split(":")[-1] for part in backend.split(",")]
    known = [str(b) for b in dist.Backend.backend_list]
    for name in names:
        if name not in known:
            raise MisconfigurationException(
                f"process_group_backend={backend!r}: {name!r} is not a torch.distributed backend. Accepted: "
                f"{', '.join(known)}.{did_you_mean(name, known)}"
            )
        if name in ("gloo", "nccl", "mpi", "ucc") and not dist.is_backend_available(name):
            raise MisconfigurationException(
                f"process_group_backend={backend!r}: this torch build has no {name!r} backend; leave "
                "process_group_backend=None for the accelerator's own."
            )


def _preset(name: str, start_method: str, find_unused: bool | None) -> type[DDPStrategy]:
    """A registered spelling of Lightning's (``"ddp_spawn"``, ``"ddp_find_unused_parameters_true"``...): the
    DDP strategy with that launch and ``find_unused_parameters`` preset (an argument given still wins)."""
    described = f"DDP, started with {start_method!r}" + (
        "" if find_unused is None else f", find_unused_parameters={find_unused}"
    )

    def make(cls: type[DDPStrategy], *args: Any, **kwargs: Any) -> DDPStrategy:
        # What the name builds is Lightning's: a plain DDPStrategy with the launch (and find_unused) preset, so its
        # type, repr and pickled form are DDPStrategy's; the preset class only answers the registry's questions.
        if kwargs.get("start_method", "popen") == "popen":
            kwargs["start_method"] = start_method
        if find_unused is not None:
            kwargs.setdefault("find_unused_parameters", find_unused)
        strategy = DDPStrategy(*args, **kwargs)
        vars(strategy)["name"] = name  # messages and the run summary say "ddp_spawn", as it was asked for
        return strategy

    attributes = {
        "name": name,
        "description": described,
        "preset_start_method": start_method,
        "preset_find_unused": find_unused,
        "__module__": __name__,
        "__doc__": f"``strategy={name!r}``: {described}.",
        "__new__": make,
    }
    preset: type[DDPStrategy] = type(f"DDPStrategy_{name}", (DDPStrategy,), attributes)
    return preset


#: Lightning's registered DDP names beyond ``"ddp"`` itself, each the DDP strategy with its presets.
DDP_PRESETS: tuple[type[DDPStrategy], ...] = tuple(
    _preset(name, start_method, find_unused) for name, start_method, find_unused in DDP_PRESET_SETTINGS
)
#: The registered DDP names whose processes are forked from this one (a notebook's kernel included), sorted.
DDP_FORK_NAMES: tuple[str, ...] = tuple(sorted(name for name, method, _ in DDP_PRESET_SETTINGS if method == "fork"))
# Each preset is a module attribute under its class name, so pickle finds it: ``ddp_spawn`` sends the Trainer,
# its strategy included, to fresh interpreters.
globals().update({preset.__name__: preset for preset in DDP_PRESETS})
