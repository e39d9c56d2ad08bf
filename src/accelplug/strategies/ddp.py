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
from typing import TYPE_CHECKING, Any

import torch

from ..envvars import env_float, env_int
from ..errors import MisconfigurationException
from .base import Strategy
from .prepared import StepRouter

if TYPE_CHECKING:
    from ..accelerator import Accelerator

__all__ = ["DDPStrategy", "attempt_store", "collective_timeout", "launched_by_torchrun"]

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


class DDPStrategy(Strategy):
    name = "ddp"
    description = "one process per device, gradients averaged with torch.distributed"
    is_distributed = True

    def __init__(self) -> None:
        super().__init__()
        self._created_group = False
        self._watched_fits = 0

    def process_group_backend(self, accelerator: Accelerator, device: torch.device) -> str:
        """The torch.distributed backend for this run: the accelerator's own (gloo on the CPU, nccl on CUDA)."""
        backend = accelerator.distributed_backend
        if backend is None:
            raise MisconfigurationException(
                f"strategy={self.name!r} needs a torch.distributed backend, and accelerator "
                f"{accelerator.name!r} has none."
            )
        return backend

    def setup_environment(self, accelerator: Accelerator, device: torch.device) -> None:
        import torch.distributed as dist

        backend = self.process_group_backend(accelerator, device)
        if not launched_by_torchrun():
            raise MisconfigurationException(
                f"strategy={self.name!r} runs one process per device, but this process was not started by a launcher "
                "(RANK/WORLD_SIZE/MASTER_ADDR are not set). Start the script with "
                "`accelplug launch --devices N script.py` or `torchrun --nproc-per-node N script.py`."
            )
        super().setup_environment(accelerator, device)
        if not dist.is_initialized():
            options: dict[str, Any] = {"backend": backend, "timeout": collective_timeout()}
            if device.type != "cpu":
                options["device_id"] = device  # lets NCCL bind eagerly and fail fast on a bad device
            store = attempt_store(options["timeout"])
            if store is not None:
                options.update(store=store, rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
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
        import torch.distributed as dist

        return dist.get_world_size() if dist.is_initialized() else int(os.environ.get("WORLD_SIZE", "1"))

    @property
    def global_rank(self) -> int:
        import torch.distributed as dist

        return dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))

    @property
    def local_rank(self) -> int:
        return int(os.environ.get("LOCAL_RANK", "0"))

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module:
        from torch.nn.parallel import DistributedDataParallel

        device = self._device()
        device_ids = None if device.type == "cpu" else [device]
        return DistributedDataParallel(StepRouter(module), device_ids=device_ids)

    def prepare_dataloader(self, loader: Any, *, shuffle_seed: int) -> Any:
        from ..data.loaders import with_distributed_sampler

        return with_distributed_sampler(loader, self.world_size, self.global_rank, shuffle_seed)

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
