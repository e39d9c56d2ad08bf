"""``accelplug launch``: start a training script as one process per device through torchrun.

The processes are started by ``torch.distributed.run``, torchrun's own elastic agent, run in this
process: it sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` for
each worker, watches them, and when one fails stops the others, so a crash ends the job in about a
second instead of leaving peers blocked in a collective. What accelplug adds is the choice of
accelerator and device count (the same selection rules the Trainer uses), passed to the workers
through ``ACCELPLUG_ACCELERATOR``, a free port when none is given, and messages that say what to fix.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .errors import MisconfigurationException

__all__ = ["LaunchPlan", "free_port", "launch", "plan_launch", "relaunch_script"]

MPS_FALLBACK_ENV = "PYTORCH_ENABLE_MPS_FALLBACK"


@dataclass(frozen=True)
class LaunchPlan:
    """What ``launch`` will start: torchrun's arguments and the variables the workers get."""

    script: str
    script_args: tuple[str, ...]
    accelerator: str
    nproc_per_node: int
    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int
    reason: str
    env: dict[str, str] = field(default_factory=dict)
    #: Run ``script`` as a module name (``python -m``) rather than a file.
    as_module: bool = False

    def torchrun_args(self) -> list[str]:
        return [
            f"--nproc-per-node={self.nproc_per_node}",
            f"--nnodes={self.nnodes}",
            f"--node-rank={self.node_rank}",
            f"--master-addr={self.master_addr}",
            f"--master-port={self.master_port}",
            "--max-restarts=0",
            "--monitor-interval=0.1",
            *(["--module"] if self.as_module else []),
            self.script,
            *self.script_args,
        ]

    def describe(self) -> str:
        nodes = f" on node {self.node_rank} of {self.nnodes}" if self.nnodes > 1 else ""
        return (
            f"accelplug launch: {self.nproc_per_node} process(es) on {self.accelerator!r}{nodes}, "
            f"rendezvous {self.master_addr}:{self.master_port} ({self.reason})"
        )


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def plan_launch(
    script: str | os.PathLike[str],
    script_args: list[str] | tuple[str, ...] = (),
    *,
    cpu: bool = False,
    accelerator: str | None = None,
    devices: str | int | None = None,
    nnodes: int | None = None,
    node_rank: int = 0,
    master_addr: str | None = None,
    master_port: int | None = None,
    mps_fallback: bool | None = None,
    as_module: bool = False,
) -> LaunchPlan:
    """Validate the launch options and resolve them with the Trainer's selection rules."""
    if cpu and accelerator is not None and accelerator.lower() != "cpu":
        raise MisconfigurationException(f"--cpu and --accelerator {accelerator!r} contradict each other; give one.")
    if not as_module and not Path(script).is_file():
        raise MisconfigurationException(f"script {str(script)!r} is not a file; give the path of a Python script.")
    from .config import load_settings  # the user's saved defaults (`accelplug config`)

    defaults = load_settings()
    if cpu:
        accelerator = "cpu"
    if accelerator is None:
        accelerator = defaults.accelerator
    if devices is None:
        devices = defaults.devices
    if nnodes is None:
        nnodes = defaults.num_nodes
    if mps_fallback is None:
        mps_fallback = defaults.mps_fallback
    if nnodes < 1:
        raise MisconfigurationException(f"--nnodes={nnodes} is invalid: expected an int >= 1.")
    if not 0 <= node_rank < nnodes:
        raise MisconfigurationException(f"--node-rank={node_rank} is invalid: expected 0 <= node rank < {nnodes}.")
    if nnodes > 1 and (master_addr is None or master_port is None):
        raise MisconfigurationException(
            f"--nnodes={nnodes} needs --master-addr and --master-port: every node must meet at the same address "
            "(the node-rank-0 machine's address and a port open on it), so they cannot be guessed."
        )
    if master_port is not None and not 1 <= master_port <= 65535:
        raise MisconfigurationException(f"--master-port={master_port} is invalid: expected a port in 1..65535.")
    from .devices import devices_from_text
    from .selection import select

    if isinstance(devices, str):
        devices = devices_from_text(devices)  # the one devices tokenizer, shared with selection and config
    selection = select(accelerator, devices)
    if selection.num_devices > 1 and "ddp" not in type(selection.accelerator).supported_strategies():
        raise MisconfigurationException(
            f"{selection.accelerator_name!r} cannot run several processes (it does not support 'ddp')."
        )
    env = {"ACCELPLUG_ACCELERATOR": selection.accelerator_name}
    if mps_fallback and MPS_FALLBACK_ENV not in os.environ:
        env[MPS_FALLBACK_ENV] = "1"
    device_type = type(selection.accelerator).device_type
    if device_type == "cpu" and "OMP_NUM_THREADS" not in os.environ:
        # Share the cores between the processes instead of torchrun's blanket 1 thread each.
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // (selection.num_devices or 1)))
    if device_type == "cuda" and list(selection.device_ids) != list(range(selection.num_devices)):
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        names = visible.split(",") if visible else None
        env["CUDA_VISIBLE_DEVICES"] = ",".join(names[i] if names else str(i) for i in selection.device_ids)
    return LaunchPlan(
        script=str(script),
        script_args=tuple(script_args),
        accelerator=selection.accelerator_name,
        nproc_per_node=selection.num_devices,
        nnodes=nnodes,
        node_rank=node_rank,
        master_addr=master_addr or "127.0.0.1",
        master_port=master_port if master_port is not None else free_port(),
        reason=selection.reason,
        env=env,
        as_module=as_module,
    )


def run_plan(plan: LaunchPlan, *, quiet: bool = False) -> int:
    """Run the workers through torchrun's agent; the job's exit code (non-zero when any rank failed)."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import get_args_parser, run

    if not quiet:
        print(plan.describe(), file=sys.stderr, flush=True)
    os.environ.update(plan.env)
    args = get_args_parser().parse_args(plan.torchrun_args())
    try:
        run(args)  # type: ignore[no-untyped-call]
    except ChildFailedError as exc:
        rank, failure = exc.get_first_failure()
        code = failure.exitcode if failure.exitcode and failure.exitcode > 0 else 1
        print(
            f"accelplug launch: rank {rank} failed (exit code {failure.exitcode}), so the other ranks were stopped; "
            "its error is printed above.",
            file=sys.stderr,
            flush=True,
        )
        return code
    return 0


def launch(script: str | os.PathLike[str], script_args: list[str] | tuple[str, ...] = (), **options: object) -> int:
    """Plan and run: the entry point of ``accelplug launch`` (options as in :func:`plan_launch`)."""
    plan = plan_launch(script, script_args, **options)  # type: ignore[arg-type]
    return run_plan(plan)


def relaunch_script(script: Path, script_args: list[str], nproc: int, accelerator: str) -> int:
    """Start ``script`` again as ``nproc`` workers (what ``Trainer(strategy='ddp')`` does in plain python)."""
    plan = LaunchPlan(
        script=str(script),
        script_args=tuple(script_args),
        accelerator=accelerator,
        nproc_per_node=nproc,
        nnodes=1,
        node_rank=0,
        master_addr="127.0.0.1",
        master_port=free_port(),
        reason="re-launched by the Trainer",
        env={"ACCELPLUG_ACCELERATOR": accelerator},
    )
    return run_plan(plan)
