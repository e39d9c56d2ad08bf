"""``accelplug launch``: start a training script as one process per device through torchrun.

The processes are started by ``torch.distributed.run``, torchrun's own elastic agent, run in this
process: it sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` for
each worker, watches them, and when one fails stops the others, so a crash ends the job in about a
second instead of leaving peers blocked in a collective. ``max_restarts`` lets the agent start the
whole group again after a failure (torchrun's elastic restarts). What accelplug adds is the choice of
accelerator and device count (the same selection rules the Trainer uses), passed to the workers
through ``ACCELPLUG_ACCELERATOR`` (and ``ACCELPLUG_PRECISION`` when a precision is given), a free
port when none is given, and messages that say what to fix.

Rendezvous: by default the nodes meet at ``master_addr:master_port`` (torchrun's ``static``
rendezvous; node ranks given by hand). ``rdzv_backend="c10d"`` (or ``etcd``/``etcd-v2``) is passed
through to torchrun with ``rdzv_endpoint`` and ``rdzv_id``: the nodes meet at the endpoint and the
rendezvous assigns node ranks, so ``node_rank``/``master_*`` must then be left out. An endpoint given
with the static rendezvous is the master address and port, as in torchrun.

When a worker fails, the agent stops the others with SIGTERM and gives them
``ACCELPLUG_LAUNCH_FAILURE_GRACE_S`` seconds (default 3) before SIGKILL, not torchrun's 30: a peer is
gone, so no collective (a checkpoint's barrier included) can complete, and a rank blocked inside NCCL
never runs its Python signal handler anyway. A SIGTERM or SIGINT sent to ``accelplug launch`` itself
(a scheduler's preemption, every rank alive) keeps torchrun's full grace period, in which the workers
write their checkpoint; so does a worker that stopped on a signal.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import math
import os
import re
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .distributed.local_processes import free_port
from .environments.base import MAX_PROCESSES
from .errors import MisconfigurationException, did_you_mean
from .precision.names import ACCEPTED_PRECISIONS

if TYPE_CHECKING:
    from .environments.base import ClusterEnvironment
    from .strategies.base import Strategy

__all__ = [
    "RDZV_BACKENDS",
    "LaunchPlan",
    "free_port",
    "launch",
    "main_script",
    "plan_launch",
    "relaunch_if_needed",
    "relaunch_script",
    "run_plan",
]

MPS_FALLBACK_ENV = "PYTORCH_ENABLE_MPS_FALLBACK"
PRECISION_ENV = "ACCELPLUG_PRECISION"
FAILURE_GRACE_ENV = "ACCELPLUG_LAUNCH_FAILURE_GRACE_S"
#: Seconds the survivors of a failed worker get between SIGTERM and SIGKILL.
DEFAULT_FAILURE_GRACE_S = 3.0
#: The rendezvous backends torchrun registers (``static`` is the master address and port).
RDZV_BACKENDS = ("static", "c10d", "etcd", "etcd-v2")
#: torchrun's default port for a c10d endpoint given without one.
C10D_DEFAULT_PORT = 29400
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_RDZV_CONF = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=[^,=]*(,[A-Za-z_][A-Za-z0-9_]*=[^,=]*)*$")


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
    #: How many times torchrun's agent starts the worker group again after a failure.
    max_restarts: int = 0
    #: ``"static"`` (meet at master_addr:master_port) or a torchrun rendezvous backend.
    rdzv_backend: str = "static"
    rdzv_endpoint: str | None = None
    rdzv_id: str | None = None
    rdzv_conf: str | None = None

    def torchrun_args(self) -> list[str]:
        args = [f"--nproc-per-node={self.nproc_per_node}", f"--nnodes={self.nnodes}"]
        if self.rdzv_backend == "static":
            args += [
                f"--node-rank={self.node_rank}",
                f"--master-addr={self.master_addr}",
                f"--master-port={self.master_port}",
            ]
        else:
            args += [f"--rdzv-backend={self.rdzv_backend}", f"--rdzv-endpoint={self.rdzv_endpoint}"]
        if self.rdzv_id is not None:
            args.append(f"--rdzv-id={self.rdzv_id}")
        if self.rdzv_conf is not None:
            args.append(f"--rdzv-conf={self.rdzv_conf}")
        return [
            *args,
            f"--max-restarts={self.max_restarts}",
            "--monitor-interval=0.1",
            *(["--module"] if self.as_module else []),
            self.script,
            *self.script_args,
        ]

    def describe(self) -> str:
        if self.rdzv_backend == "static":
            nodes = f" on node {self.node_rank} of {self.nnodes}" if self.nnodes > 1 else ""
            meet = f"rendezvous {self.master_addr}:{self.master_port}"
        else:
            nodes = f" on each of {self.nnodes} nodes" if self.nnodes > 1 else ""
            meet = f"{self.rdzv_backend} rendezvous {self.rdzv_endpoint}"
        precision = f", precision {self.env[PRECISION_ENV]}" if PRECISION_ENV in self.env else ""
        restarts = f", up to {self.max_restarts} restart(s)" if self.max_restarts else ""
        return (
            f"accelplug launch: {self.nproc_per_node} process(es) on {self.accelerator!r}{nodes}{precision}, "
            f"{meet}{restarts} ({self.reason})"
        )


# ---- validation of each option ---------------------------------------------------------------------
def _whole_number(option: str, value: object, minimum: int, accepted: str) -> int:
    """An int option given as an int or as ASCII digits (never ``'²'``, which ``str.isdigit`` accepts)."""
    if isinstance(value, bool):
        raise MisconfigurationException(f"{option}={value!r} is invalid: expected {accepted}.")
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isascii() and digits.isdigit()):
            raise MisconfigurationException(f"{option}={value!r} is invalid: expected {accepted}.")
        value = int(text)
    if not isinstance(value, int) or value < minimum:
        raise MisconfigurationException(f"{option}={value!r} is invalid: expected {accepted}.")
    return value


def _nnodes(value: object) -> int:
    if isinstance(value, str) and ":" in value:
        raise MisconfigurationException(
            f"--nnodes={value!r} is an elastic range (MIN:MAX), which accelplug launch does not run; give a fixed "
            "number of machines, or start the script with torchrun directly (accelplug's Trainer works under it)."
        )
    nodes = _whole_number("--nnodes", value, 1, "a whole number of machines >= 1")
    if nodes > MAX_PROCESSES:
        raise MisconfigurationException(
            f"--nnodes={value!r} is invalid: expected a whole number of machines between 1 and {MAX_PROCESSES}."
        )
    return nodes


def _port(option: str, value: object) -> int:
    port = _whole_number(option, value, 1, "a port in 1..65535")
    if port > 65535:
        raise MisconfigurationException(f"{option}={value!r} is invalid: expected a port in 1..65535.")
    return port


def _devices(value: object) -> str | int:
    """Shape checks the selection rules cannot make on a string: ASCII digits only, torchrun's words explained."""
    if not isinstance(value, str):
        return value  # type: ignore[return-value]  # select() explains any other type
    text = value.strip()
    if text.lower() in ("gpu", "cpu", "xpu"):
        name = text.lower()
        flag = "--cpu" if name == "cpu" else f"--accelerator {name}"
        raise MisconfigurationException(
            f"--devices={value!r}: torchrun's --nproc-per-node {name} means 'one process per {name} device'; "
            f"with accelplug give the accelerator and the count apart: accelplug launch {flag} --devices -1 ..."
        )
    from .hardware.devices import devices_from_text

    try:
        return devices_from_text(text)  # the one devices tokenizer, shared with selection and config
    except MisconfigurationException as exc:
        raise MisconfigurationException(f"--{exc}") from None  # name the option as it was typed


def _endpoint(value: str, default_port: int | None) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6) or ``host`` alone when a default port applies."""
    text = value.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep or (host.count(":") and not host.startswith("[")):  # no port, or a bare IPv6 address
        host, port_text = text, ""
    host = host.strip("[]")
    if not host:
        raise MisconfigurationException(
            f"--rdzv-endpoint={value!r} is invalid: expected HOST:PORT, e.g. 10.0.0.1:29400 (the address of a "
            "machine every node can reach)."
        )
    if not port_text:
        if default_port is None:
            raise MisconfigurationException(
                f"--rdzv-endpoint={value!r} has no port: with the static rendezvous the endpoint is the master "
                "address and port, e.g. 10.0.0.1:29500."
            )
        return host, default_port
    return host, _port("--rdzv-endpoint port", port_text)


def _check_module(module: str) -> None:
    """A dotted name whose top-level package can be found, without importing anything."""
    if not _MODULE_NAME.match(module):
        raise MisconfigurationException(
            f"module {module!r} is not a module name; -m takes a dotted name such as 'my_pkg.train'."
        )
    top = module.split(".")[0]
    found = importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path])
    if found is None and importlib.util.find_spec(top) is None:
        raise MisconfigurationException(
            f"module {module!r} cannot be found: no {top!r} in the current folder or on this Python's path "
            f"({sys.executable}). Install it, run from its folder, or give a script path without -m."
        )


def _check_script(script: str | os.PathLike[str]) -> None:
    path = Path(script)
    if path.is_dir():
        raise MisconfigurationException(
            f"script {str(script)!r} is a folder; give the path of a Python file, or -m MODULE to run a package."
        )
    if not path.is_file():
        raise MisconfigurationException(f"script {str(script)!r} is not a file; give the path of a Python script.")


#: ``accelerate launch --mixed_precision`` values that are not accelplug precision names.
_ACCELERATE_PRECISIONS = {"no": "32-true", "fp16": "16-mixed", "fp8": None}


def _refuse_accelerate_precision(precision: object) -> None:
    key = str(precision).strip().lower()
    if key in _ACCELERATE_PRECISIONS:
        ours = _ACCELERATE_PRECISIONS[key]
        instead = f"accelplug's name for it is {ours!r}" if ours else "accelplug has no fp8 precision"
        raise MisconfigurationException(
            f"--precision={precision!r} is accelerate's spelling; {instead}. Accepted: {ACCEPTED_PRECISIONS}."
        )


def _rendezvous(
    backend: str | None,
    endpoint: str | None,
    rdzv_id: str | None,
    rdzv_conf: str | None,
    *,
    nnodes: int,
    node_rank: int | None,
    master_addr: str | None,
    master_port: int | None,
    standalone: bool,
) -> tuple[str, str | None, str, int, int]:
    """Resolve the rendezvous options: backend, endpoint (non-static only), meeting host and port, node rank."""
    name = "static" if backend is None else backend.strip().lower()
    if name not in RDZV_BACKENDS:
        raise MisconfigurationException(
            f"--rdzv-backend={backend!r} is not a torchrun rendezvous backend; accepted: "
            f"{', '.join(RDZV_BACKENDS)}.{did_you_mean(name, RDZV_BACKENDS)}"
        )
    if rdzv_conf is not None and not _RDZV_CONF.match(rdzv_conf.strip()):
        raise MisconfigurationException(
            f"--rdzv-conf={rdzv_conf!r} is invalid: expected key=value pairs separated by commas, "
            "e.g. 'join_timeout=900,read_timeout=60'."
        )
    if standalone:
        given = [
            flag
            for flag, value in (
                ("--nnodes", nnodes if nnodes > 1 else None),
                ("--master-addr", master_addr),
                ("--master-port", master_port),
                ("--rdzv-backend", backend),
                ("--rdzv-endpoint", endpoint),
            )
            if value is not None
        ]
        if given:
            raise MisconfigurationException(
                f"--standalone means one machine with a rendezvous on a free local port, so {', '.join(given)} "
                "cannot be given with it; leave --standalone out for a multi-machine job."
            )
    if name != "static":
        clash = [f for f, v in (("--master-addr", master_addr), ("--master-port", master_port)) if v is not None]
        if node_rank is not None:
            clash.append("--node-rank")
        if clash:
            raise MisconfigurationException(
                f"--rdzv-backend={name} assigns node ranks and meets at --rdzv-endpoint, so {', '.join(clash)} "
                "cannot be given with it; use either --master-addr/--master-port/--node-rank (static rendezvous) "
                "or --rdzv-backend/--rdzv-endpoint."
            )
        if endpoint is None:
            if nnodes > 1:
                raise MisconfigurationException(
                    f"--rdzv-backend={name} with --nnodes={nnodes} needs --rdzv-endpoint HOST:PORT, an address "
                    "every node can reach (one of the machines, or the etcd server)."
                )
            endpoint = f"127.0.0.1:{free_port()}"
        host, port = _endpoint(endpoint, C10D_DEFAULT_PORT)
        return name, f"[{host}]:{port}" if ":" in host else f"{host}:{port}", host, port, 0
    if endpoint is not None:  # torchrun's static rendezvous reads the endpoint as master address and port
        if master_addr is not None or master_port is not None:
            raise MisconfigurationException(
                "--rdzv-endpoint and --master-addr/--master-port name the same address twice; give one of them."
            )
        master_addr, master_port = _endpoint(endpoint, None)
    rank = 0 if node_rank is None else node_rank
    if nnodes > 1 and (master_addr is None or master_port is None):
        raise MisconfigurationException(
            f"--nnodes={nnodes} needs --master-addr and --master-port: every node must meet at the same address "
            "(the node-rank-0 machine's address and a port open on it), so they cannot be guessed."
        )
    if not 0 <= rank < nnodes:
        raise MisconfigurationException(f"--node-rank={rank} is invalid: expected 0 <= node rank < {nnodes}.")
    port = master_port if master_port is not None else free_port()
    return name, None, (master_addr or "127.0.0.1").strip(), port, rank


def plan_launch(
    script: str | os.PathLike[str],
    script_args: list[str] | tuple[str, ...] = (),
    *,
    cpu: bool = False,
    accelerator: str | None = None,
    devices: str | int | None = None,
    nnodes: int | str | None = None,
    node_rank: int | str | None = None,
    master_addr: str | None = None,
    master_port: int | str | None = None,
    mps_fallback: bool | None = None,
    as_module: bool = False,
    precision: str | int | None = None,
    max_restarts: int | str = 0,
    rdzv_backend: str | None = None,
    rdzv_endpoint: str | None = None,
    rdzv_id: str | None = None,
    rdzv_conf: str | None = None,
    standalone: bool = False,
) -> LaunchPlan:
    """Validate the launch options and resolve them with the Trainer's selection rules.

    ``None`` means "not given": the value then comes from ``ACCELPLUG_*`` variables or the config
    file (``accelplug config``), as everywhere. ``precision``, when given, is checked against the
    chosen accelerator and passed to the workers as ``ACCELPLUG_PRECISION``.
    """
    if cpu and accelerator is not None and accelerator.strip().lower() != "cpu":
        raise MisconfigurationException(f"--cpu and --accelerator {accelerator!r} contradict each other; give one.")
    restarts = _whole_number("--max-restarts", max_restarts, 0, "a whole number >= 0")
    if node_rank is not None:
        node_rank = _whole_number("--node-rank", node_rank, 0, "a whole number >= 0")
    if master_port is not None:
        master_port = _port("--master-port", master_port)
    if master_addr is not None and not master_addr.strip():
        raise MisconfigurationException("--master-addr='' is invalid: expected a host name or IP address.")
    if as_module:
        _check_module(str(script))
    else:
        _check_script(script)
    from .config import load_settings  # the user's saved defaults (`accelplug config`)

    defaults = load_settings()
    if cpu:
        accelerator = "cpu"
    if accelerator is None:
        accelerator = defaults.accelerator
    wanted_devices = _devices(defaults.devices if devices is None else devices)
    nodes = _nnodes(defaults.num_nodes if nnodes is None else nnodes)
    if mps_fallback is None:
        mps_fallback = defaults.mps_fallback
    backend, endpoint, addr, port, rank = _rendezvous(
        rdzv_backend,
        rdzv_endpoint,
        rdzv_id,
        rdzv_conf,
        nnodes=nodes,
        node_rank=node_rank,
        master_addr=master_addr,
        master_port=master_port,
        standalone=standalone,
    )
    from .selection import select

    if precision is not None:
        _refuse_accelerate_precision(precision)
        selection = select(accelerator, wanted_devices, precision=precision)
    else:
        selection = select(accelerator, wanted_devices)
    if selection.num_devices > 1 and "ddp" not in type(selection.accelerator).supported_strategies():
        raise MisconfigurationException(
            f"{selection.accelerator_name!r} cannot run several processes (it does not support 'ddp')."
        )
    env = {"ACCELPLUG_ACCELERATOR": selection.accelerator_name}
    if precision is not None:
        env[PRECISION_ENV] = selection.precision
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
        nnodes=nodes,
        node_rank=rank,
        master_addr=addr,
        master_port=port,
        reason=selection.reason,
        env=env,
        as_module=as_module,
        max_restarts=restarts,
        rdzv_backend=backend,
        rdzv_endpoint=endpoint,
        rdzv_id=rdzv_id,
        rdzv_conf=rdzv_conf,
    )


def run_plan(plan: LaunchPlan, *, quiet: bool = False) -> int:
    """Run the workers through torchrun's agent; the job's exit code (non-zero when any rank failed).

    A SIGTERM/SIGINT to this process is forwarded by the agent to the workers, which then write a
    checkpoint and exit (see ``accelplug.trainer.process.interrupts``); the job then exits 128 + the signal.
    """
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import get_args_parser, run

    if not quiet:
        print(plan.describe(), file=sys.stderr, flush=True)
    os.environ.update(plan.env)
    # torchrun's agent keeps each worker's error file (what the failure line quotes) in a log folder,
    # by default a new /tmp/torchelastic_* per job that nothing removes; this one goes when the job
    # ends, after the agent has read the error files.
    with tempfile.TemporaryDirectory(prefix="accelplug-launch-", ignore_cleanup_errors=True) as logs:
        args = get_args_parser().parse_args([f"--log-dir={logs}", *plan.torchrun_args()])
        try:
            with _short_grace_after_failures(_failure_grace()):
                run(args)  # type: ignore[no-untyped-call]
        except ChildFailedError as exc:
            _rank, exitcode, line = _failure_line(exc, plan.max_restarts)
            print(line, file=sys.stderr, flush=True)
            return exitcode if exitcode > 0 else 1
        except SignalException as exc:
            return 128 + int(exc.sigval)
    return 0


def _failure_grace() -> float:
    from .envvars import env_float

    return env_float(FAILURE_GRACE_ENV, DEFAULT_FAILURE_GRACE_S, minimum=0.0, maximum=3600.0)


_SIGNAL_STOPS = frozenset({128 + signal.SIGTERM, 128 + signal.SIGINT, -signal.SIGTERM, -signal.SIGINT})


@contextlib.contextmanager
def _short_grace_after_failures(grace: float) -> Any:
    """While torchrun's agent runs here: once a worker has *failed*, the others get ``grace`` seconds, not 30.

    The agent's process context stops the remaining workers itself (``close``) as soon as its poll finds
    a failed one, and again when the agent shuts down; a worker that failed on its own (not one that
    stopped on SIGTERM/SIGINT) shortens every such wait. Without a failure, as when the agent forwards
    its own SIGTERM, ``close`` keeps the agent's timeout. Should torch's class change shape, its
    behaviour is left as it is.
    """
    import inspect

    from torch.distributed.elastic.multiprocessing.api import PContext

    close = PContext.close
    if "timeout" not in inspect.signature(close).parameters:
        yield
        return

    whole = math.ceil(grace)  # torch's timeout is whole seconds

    def closed(context: Any, death_sig: Any = None, timeout: int = 30) -> None:
        failures = getattr(context, "_failures", None) or {}
        if any(getattr(f, "exitcode", 0) not in _SIGNAL_STOPS for f in failures.values()):
            timeout = min(timeout, whole)
        close(context, death_sig, timeout)

    PContext.close = closed  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        PContext.close = close  # type: ignore[method-assign]


def _failure_line(exc: Exception, max_restarts: int) -> tuple[int, int, str]:
    """``(rank, exit code, the line to print)`` for the failure that ended the job.

    A rank ended by the hang watchdog is reported first, with the message it recorded in torchrun's
    error file (it names the hung rank); then torchrun's first failure among the ranks that failed on
    their own; a rank that only stopped because a peer failed last, with its message (it names that peer).
    """
    from .strategies.watchdog import HUNG_EXIT_CODE, PEER_FAILED_EXIT_CODE

    failures = exc.failures  # type: ignore[attr-defined]
    hung = sorted(r for r, f in failures.items() if f.exitcode == HUNG_EXIT_CODE)
    # Not the ranks that only stopped for another's failure, nor those the agent's SIGTERM/SIGKILL ended after it.
    own = {
        r: f for r, f in failures.items() if f.exitcode not in (PEER_FAILED_EXIT_CODE, -signal.SIGTERM, -signal.SIGKILL)
    }
    peers = sorted(r for r, f in failures.items() if f.exitcode == PEER_FAILED_EXIT_CODE)
    if hung:
        rank, failure = hung[0], failures[hung[0]]
    elif own or not peers:
        pool = own or failures
        rank = min(pool, key=lambda r: (pool[r].timestamp, r))
        failure = pool[rank]
    else:  # the failed rank was still exiting when the agent stopped it: a survivor's message names it
        rank, failure = peers[0], failures[peers[0]]
        recorded = failure.message.get("message") if isinstance(failure.message, dict) else None
        restarts = f" after {max_restarts} restart(s)" if max_restarts else ""
        what = recorded or f"rank {rank} stopped because another rank failed"
        return rank, failure.exitcode, f"accelplug launch: {what} The job ended{restarts}; the error is printed above."
    restarts = f" after {max_restarts} restart(s)" if max_restarts else ""
    if failure.exitcode in (128 + signal.SIGTERM, 128 + signal.SIGINT):
        name = signal.Signals(failure.exitcode - 128).name
        return rank, failure.exitcode, f"accelplug launch: the workers stopped on {name}{restarts}; see the line above."
    if hung:
        recorded = failure.message.get("message") if isinstance(failure.message, dict) else None
        what = recorded or f"rank {rank} was hung (see its message above)"
        return rank, failure.exitcode, f"accelplug launch: {what} The other ranks were stopped{restarts}."
    return (
        rank,
        failure.exitcode,
        f"accelplug launch: rank {rank} failed (exit code {failure.exitcode}){restarts}, so the other ranks were "
        "stopped; its error is printed above.",
    )


def launch(script: str | os.PathLike[str], script_args: list[str] | tuple[str, ...] = (), **options: object) -> int:
    """Plan and run: the entry point of ``accelplug launch`` (options as in :func:`plan_launch`).

    Inside a job whose scheduler started this process as one of several (``srun``, ``mpirun``, LSF's
    ``jsrun``, a torchrun worker), starting torchrun would multiply the processes (each task becoming
    a job of its own): the script then runs here, as this task, without torchrun (see
    :func:`run_in_task`).
    """
    plan = plan_launch(script, script_args, **options)  # type: ignore[arg-type]
    from .selection import cluster_environment

    environment = cluster_environment()
    if environment is not None and environment.creates_processes_externally:
        return run_in_task(plan, environment, given=options)
    return run_plan(plan)


def run_in_task(plan: LaunchPlan, environment: ClusterEnvironment, *, given: dict[str, object]) -> int:
    """Replace this process with the script (``exec``), as the scheduler's task, with the plan's variables.

    ``--devices``/``--nnodes`` given are checked against the processes the scheduler started (one
    process per device); the script's Trainer checks its own ``devices``/``num_nodes`` the same way.
    ``exec`` rather than a child process so the scheduler's signals (Slurm's ``SIGUSR1`` before the
    time limit) reach the training process itself.
    """
    world = environment.world_size()
    if given.get("devices") is not None or given.get("nnodes") is not None:
        asked = plan.nproc_per_node * plan.nnodes
        if asked != world:
            raise MisconfigurationException(
                f"--devices={plan.nproc_per_node} x --nnodes={plan.nnodes} = {asked} processes, but this process is "
                f"one of {world} that {environment.name or type(environment).__name__} started; accelplug launch "
                f"does not start torchrun inside it. Leave --devices/--nnodes out, or ask the scheduler for {asked} "
                "tasks."
            )
    command = [sys.executable, *(["-m"] if plan.as_module else []), plan.script, *plan.script_args]
    print(
        f"accelplug launch: {environment.name} started this process as rank {environment.global_rank()} of {world}; "
        f"running {plan.script} in it without torchrun.",
        file=sys.stderr,
        flush=True,
    )
    os.environ.update(plan.env)
    os.execv(sys.executable, command)
    return 0  # pragma: no cover - execv does not return


def relaunch_script(script: Path, script_args: list[str], nproc: int, accelerator: str) -> int:
    """Start ``script`` again as ``nproc`` workers (what ``Trainer(strategy="ddp")`` and ``Fabric.launch()`` do)."""
    plan = LaunchPlan(
        script=str(script),
        script_args=tuple(script_args),
        accelerator=accelerator,
        nproc_per_node=nproc,
        nnodes=1,
        node_rank=0,
        master_addr="127.0.0.1",
        master_port=free_port(),
        reason="re-launched by the script itself (its strategy runs one process per device)",
        env={"ACCELPLUG_ACCELERATOR": accelerator},
    )
    return run_plan(plan)


def relaunch_if_needed(
    strategy: Strategy,
    accelerator: str,
    num_devices: int,
    num_nodes: int,
    environment: ClusterEnvironment | None = None,
) -> None:
    """Start one process per device when DDP was asked for outside a launcher (this process then exits).

    What ``Trainer(strategy="ddp")`` and ``Fabric(...).launch()`` do in a plain ``python script.py``. When a
    scheduler or launcher started the processes (``srun``, ``mpirun``, LSF's ``jsrun``, ``torchrun``: the
    ``environment`` given or detected), nothing is started: ``devices`` x ``num_nodes`` is checked against
    the processes it started, so a mismatch is named before any collective hangs, and its ranks and
    rendezvous address are exported for ``init_process_group``.
    """
    from .environments.lightning import LightningEnvironment
    from .selection import adopt_environment, cluster_environment
    from .strategies.ddp import launched_by_torchrun

    adopted = cluster_environment(environment)
    if adopt_environment(adopted, num_devices, num_nodes):
        if strategy.is_distributed and isinstance(adopted, LightningEnvironment):
            adopted.check_started_world(num_devices, num_nodes)  # started by hand: a mismatch would hang
        return
    if num_nodes > 1 and not launched_by_torchrun():
        raise MisconfigurationException(
            f"num_nodes={num_nodes} asks for a run over {num_nodes} machines, but this process was not started by a "
            f"launcher; run `accelplug launch --nnodes {num_nodes} --node-rank R --master-addr A --master-port P "
            "script.py` on each machine (or start it with srun/mpirun), or leave num_nodes at 1."
        )
    if not strategy.is_distributed:
        return
    if launched_by_torchrun():
        _check_world_size(num_devices, num_nodes)
        return
    if not strategy.needs_launcher(num_devices * num_nodes):
        return  # e.g. FSDP on one device: a process group of one, made in this process
    _refuse_launching_from_a_worker(cluster_environment(environment))
    script = main_script()
    how = (
        f"start it with `accelplug launch --accelerator {accelerator} --devices {num_devices} "
        f"script.py` (or `torchrun --nproc-per-node {num_devices} script.py`)"
    )
    if script is None:
        raise MisconfigurationException(
            f"strategy={strategy.name!r} with {num_devices} devices runs one process per device, "
            f"and this interpreter was not started from a script file that could be re-launched; {how}."
        )
    print(
        f"accelplug: re-launching {script.name} as {num_devices} processes ({strategy.name}); "
        f"to control this yourself, {how}.",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(relaunch_script(script, sys.argv[1:], num_devices, accelerator))


class LaunchFromWorkerError(MisconfigurationException, RuntimeError):
    """A process that is not its node's first (``local_rank > 0``) was about to start processes of its own: a
    ``RuntimeError`` as in Lightning, and a configuration error."""


def _refuse_launching_from_a_worker(environment: ClusterEnvironment | None) -> None:
    """Only a node's first process starts the others. A worker that gets here means its environment claims it
    starts no processes while ``LOCAL_RANK`` says it is one of several: re-launching would multiply the
    processes, each worker starting a world of its own, so it stops with the two likely causes."""
    local_rank = environment.local_rank() if environment is not None else int(os.environ.get("LOCAL_RANK", "0"))
    if local_rank > 0:
        raise LaunchFromWorkerError(
            f"Lightning attempted to launch new distributed processes with `local_rank > 0` (local_rank={local_rank})."
            " Only the first process of a node starts the others. Either LOCAL_RANK was set in the environment by "
            "mistake, or the cluster environment "
            f"{type(environment).__name__ if environment is not None else ''} answers "
            "creates_processes_externally=False although something else started this process."
        )


def _check_world_size(num_devices: int, nodes: int) -> None:
    """With ``num_nodes`` given, the launcher's ``WORLD_SIZE`` must be nodes x devices per node."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if nodes > 1 and world != nodes * num_devices:
        raise MisconfigurationException(
            f"num_nodes={nodes} with {num_devices} device(s) per node means {nodes * num_devices} "
            f"processes, but the launcher started WORLD_SIZE={world}; make --nnodes/--devices of "
            "`accelplug launch` match the script's num_nodes/devices."
        )


def main_script() -> Path | None:
    """The file run as ``python file.py`` (not ``-m``, ``-c`` or an interactive session), if any."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or main_file is None or getattr(main, "__spec__", None) is not None:
        return None
    path = Path(main_file).resolve()
    return path if path.is_file() and path.suffix == ".py" else None


#: What a run adopts, now in :mod:`accelplug.selection` (Trainer() loads it, not the launcher); still answered here.
_MOVED_TO_SELECTION = frozenset({"adopt_environment", "attach_environment", "cluster_environment"})


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_SELECTION:
        from . import selection

        return getattr(selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
