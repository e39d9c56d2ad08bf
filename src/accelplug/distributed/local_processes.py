"""The one way accelplug starts processes on this machine itself: one per device, rank 0's answer back.

``Trainer(strategy="ddp_spawn"/"ddp_fork"/"ddp_notebook")`` and ``Fabric.launch(function)`` with those
strategies both come here (a launcher such as torchrun, which runs a *script* per device, is
``accelplug.launcher``'s). Each started process gets torchrun's variables (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``), ``NODE_RANK`` and ``MASTER_ADDR``/``MASTER_PORT`` on a
free local port, so the rest of accelplug, the cluster environments included, reads the same answers as under
torchrun. It runs ``entry(**objects)``; what rank 0 returns is written to a file and returned here.

The start methods differ in how the objects get to the processes:

- ``fork`` copies this process as it is: anything works, a notebook's classes included, but a process
  whose CUDA is initialised cannot fork (refused before anything starts).
- ``spawn`` (and ``forkserver``) start fresh interpreters, which receive the objects pickled. They are
  pickled here, once, before any process starts, so an object that cannot be pickled (a lambda, a local
  function or class, an open file) is named with the path to it rather than failing in every child. A
  plain ``pickle`` rather than torch's queue pickler keeps each process's tensors its own (torch would put
  CPU weights in shared memory, where every rank's optimizer step would land on the same numbers). The
  random generators and the deterministic-algorithms switch of this process go along, so a seed set before
  ``fit`` means the same in every process. A class defined in an interpreter with no file behind it
  (``python -c``, a notebook cell) cannot be found by a fresh interpreter: that is refused with what to
  do instead, as is a script that starts processes while it is being imported (no ``__main__`` guard).
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..errors import MisconfigurationException

__all__ = [
    "LOCAL_PROCESS_VARIABLES",
    "MissingMainGuard",
    "check_fork_safe",
    "free_port",
    "start_local_processes",
    "worker_variables",
]

#: What every started process is told (torchrun's variables, ``NODE_RANK`` and the rendezvous).
LOCAL_PROCESS_VARIABLES = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
)


class MissingMainGuard(MisconfigurationException, RuntimeError):
    """A script started processes while a spawned interpreter imported it (Lightning raises a ``RuntimeError``)."""


#: How deep the search for the object that cannot be pickled goes before naming what it has reached.
_SEARCH_DEPTH = 8


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def worker_variables(local_rank: int, processes: int, port: int | str) -> dict[str, str]:
    """The variables of process ``local_rank`` of ``processes`` started on this machine (node 0 of 1)."""
    values = (local_rank, local_rank, processes, processes, 0, 0, "127.0.0.1", port)
    return {name: str(value) for name, value in zip(LOCAL_PROCESS_VARIABLES, values, strict=True)}


def check_fork_safe(strategy_name: str) -> None:
    """Refuse to fork once CUDA is initialised in this process (children would inherit a broken context)."""
    if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        raise MisconfigurationException(
            f"strategy={strategy_name!r} forks one process per device, but CUDA is already initialised in this "
            "process (a cell used the GPU before fit), and a forked process cannot use CUDA then. Restart the "
            "kernel and run fit before any CUDA call, or use strategy='ddp_spawn' (or 'ddp' from a script)."
        )


def start_local_processes(
    entry: Callable[..., Any], objects: dict[str, Any], processes: int, start_method: str, *, strategy_name: str
) -> Any:
    """Run ``entry(**objects)`` in ``processes`` new processes on this machine; what rank 0 returned.

    ``strategy_name`` is the user's spelling, for the messages. A process that fails makes this raise
    torch's ``ProcessRaisedException`` (its traceback included) once the others have been stopped.
    """
    import torch.multiprocessing as mp

    if start_method == "fork":
        check_fork_safe(strategy_name)
        _leave_group_before_fork(strategy_name)
        sent: Any = (entry, objects)
    else:
        _check_main_guard(strategy_name)
        sent = _pickled(entry, objects, strategy_name)
    port = str(free_port())
    with tempfile.TemporaryDirectory(prefix="accelplug-processes-") as folder:
        result = Path(folder) / "rank0.pt"
        mp.start_processes(  # type: ignore[attr-defined,no-untyped-call]
            _run_one, args=(sent, processes, port, result), nprocs=processes, start_method=start_method
        )
        # A file this process's own child wrote a moment ago in a private folder: not untrusted input.
        return torch.load(result, map_location="cpu", weights_only=False) if result.exists() else None


def _run_one(local_rank: int, sent: Any, processes: int, port: str, result: Path) -> None:
    """One started process: its variables, the objects (unpickled for spawn), the entry; rank 0 writes back."""
    os.environ.update(worker_variables(local_rank, processes, port))
    if isinstance(sent, bytes):
        entry, objects, globals_ = pickle.loads(sent)
        _restore_globals(globals_)
    else:
        entry, objects = sent
    output = entry(**objects)
    if local_rank == 0:
        torch.save(output, result)


def _leave_group_before_fork(strategy_name: str) -> None:
    """A process group of one made earlier in this process (DDP on one device) is left before forking: a forked
    child cannot leave a gloo group its parent made (destroying it there waits forever on locks the parent's
    threads held at the fork), and the children make a group of their own. A larger group means this process
    is already one rank of a running job, which must not start more processes of its own."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    if dist.get_world_size() > 1:
        raise MisconfigurationException(
            f"strategy={strategy_name!r} starts processes of its own, but this process is already rank "
            f"{dist.get_rank()} of a {dist.get_world_size()}-process job (torch.distributed is initialised): use "
            "strategy='ddp' under the launcher that started the job, or start the fit outside it."
        )
    dist.destroy_process_group()


# ---- spawn: what crosses into a fresh interpreter ------------------------------------------------------
def _globals() -> dict[str, Any]:
    """This process's random generators and torch's determinism switches, for the spawned ones."""
    from ..seed import _rng_states

    return {
        "rng": _rng_states(include_cuda=False),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
    }


def _restore_globals(values: dict[str, Any]) -> None:
    from ..seed import _restore

    _restore(values["rng"])
    torch.use_deterministic_algorithms(values["deterministic"], warn_only=values["warn_only"])
    torch.backends.cudnn.benchmark = values["cudnn_benchmark"]


def _check_main_guard(strategy_name: str) -> None:
    """A fresh interpreter imports the user's script again; starting processes from *that* import would loop."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise MissingMainGuard(
            f"strategy={strategy_name!r} starts fresh Python processes, which import your script again, and it "
            "started processes while being imported: spawning requires that your script guards the main function "
            'with an `if __name__ == "__main__"` clause. Put the code that builds the Trainer/Fabric and calls '
            "fit/launch under it (or in a function called from it), or use strategy='ddp'."
        )


def _pickled(entry: Callable[..., Any], objects: dict[str, Any], strategy_name: str) -> bytes:
    """``(entry, objects, globals)`` as bytes, or a clear error naming what cannot reach a fresh interpreter."""
    main_has_file = _main_importable()
    unreachable: list[str] = []

    class _Pickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            module = getattr(obj, "__module__", None)
            if not main_has_file and module == "__main__" and isinstance(obj, type | type(_pickled)):
                unreachable.append(getattr(obj, "__qualname__", repr(obj)))
            return NotImplemented

    import io

    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((entry, objects, _globals()))
    except Exception as error:  # pickle raises PicklingError, TypeError or AttributeError by object
        where, what = _find_unpicklable_in(entry, objects)
        raise MisconfigurationException(
            f"strategy={strategy_name!r} starts fresh Python processes, which receive the trainer, the model, the "
            f"data and the callbacks pickled, and {where} cannot be pickled ({type(what).__name__}: {error}). "
            "Define functions and classes at the top level of a module (no lambdas or local definitions), "
            "leave open files and connections out of these objects, or use strategy='ddp_fork' (no pickling)."
        ) from error
    if unreachable:
        raise MisconfigurationException(
            f"strategy={strategy_name!r} starts fresh Python processes, and {', '.join(sorted(set(unreachable)))} "
            "is defined in this interpreter's __main__, which has no file a fresh process could import (python -c, "
            "a notebook, an interactive session). Use strategy='ddp_notebook' (forks the processes), or move "
            "these definitions to a module or a script."
        )
    return buffer.getvalue()


def _main_importable() -> bool:
    """Whether a spawned interpreter can find this one's ``__main__`` (a script file or a ``-m`` module)."""
    main = sys.modules.get("__main__")
    return main is not None and (getattr(main, "__file__", None) is not None or main.__spec__ is not None)


def _find_unpicklable_in(entry: Callable[..., Any], objects: dict[str, Any]) -> tuple[str, Any]:
    """Where in ``objects`` (by their names) the pickling failed; else the entry itself."""
    for name, value in objects.items():
        if not _pickles(value):
            return _find_unpicklable(value, name)
    return "the function run in each process", entry


def _find_unpicklable(value: Any, path: str, depth: int = 0) -> tuple[str, Any]:
    """The deepest ``path`` (``trainer.callbacks[2].fn``) to an object that does not pickle, and the object."""
    if depth < _SEARCH_DEPTH:
        for child_path, child in _children(value, path):
            if not _pickles(child):
                return _find_unpicklable(child, child_path, depth + 1)
    return path, value


def _children(value: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [(f"{path}[{key!r}]", item) for key, item in value.items()]
    if isinstance(value, list | tuple | set | frozenset):
        return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict) and not isinstance(value, type):
        getstate = getattr(value, "__getstate__", None)
        try:
            shown = getstate() if callable(getstate) else state
        except Exception:
            return []
        if isinstance(shown, dict):
            return [(f"{path}.{name}", item) for name, item in shown.items()]
    return []


def _pickles(value: Any) -> bool:
    try:
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return False
    return True
