"""What an accelerator says about itself, asked once and checked against the contract.

``accelerator="auto"``, ``accelplug list`` and selection all need the same answers: is it available,
why not, how many devices, which strategies and precisions. :func:`probe` asks them in one go and
checks every answer's type and range, so that a plugin returning ``"3"``, ``None`` or ``-1`` from
``device_count()`` is reported as a plugin that broke its contract instead of surfacing later as a
``TypeError`` in selection or as a run on devices that do not exist. The registry decides where a
probe runs (a worker thread with a time bound for entry-point plugins) and how long it is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ._record import record

if TYPE_CHECKING:
    from .accelerator import Accelerator

__all__ = ["AcceleratorStatus", "ContractBreach", "ask", "broken", "single_device_only"]

Tracer = Callable[[str], None]


@record(frozen=True)
class AcceleratorStatus:
    """An accelerator's answers to the class-level queries, checked."""

    name: str
    available: bool
    #: Why it cannot be used; None exactly when ``available``.
    reason: str | None
    #: 0 when unavailable.
    device_count: int
    #: How many devices ``devices="auto"`` means (1 when only ``single_device`` is supported).
    auto_device_count: int
    strategies: tuple[str, ...]
    precisions: tuple[str, ...]
    #: How long the queries took, together.
    seconds: float = 0.0
    #: The contract the accelerator's code broke (an exception, a wrong answer, a hang); None if none.
    problem: str | None = None

    def timed(self, seconds: float) -> AcceleratorStatus:
        return replace(self, seconds=seconds)


class ContractBreach(Exception):
    """An answer of the wrong type or range; the message says which query and what it returned."""


def single_device_only(strategies: tuple[str, ...]) -> bool:
    """Whether these strategies can use one device only (so ``devices="auto"`` must mean one)."""
    return set(strategies) <= {"single_device"}


def broken(name: str, problem: str, seconds: float = 0.0) -> AcceleratorStatus:
    """The status of an accelerator whose queries broke the contract: unavailable, with the cause."""
    return AcceleratorStatus(name, False, problem, 0, 0, (), (), seconds, problem)


def _names(answer: object, query: str) -> tuple[str, ...]:
    if not isinstance(answer, (tuple, list)) or not answer or not all(isinstance(n, str) for n in answer):
        raise ContractBreach(f"{query}() returned {answer!r}; expected a non-empty tuple of names")
    return tuple(answer)


def _count(answer: object, query: str, lowest: int) -> int:
    if isinstance(answer, bool) or not isinstance(answer, int) or answer < lowest:
        raise ContractBreach(
            f"{query}() returned {answer!r} ({type(answer).__name__}); expected an int >= {lowest} "
            "(the number of devices a run may use)"
        )
    return answer


def ask(cls: type[Accelerator], progress: list[str], trace: Tracer | None = None) -> AcceleratorStatus:
    """Ask ``cls`` every class-level query and check the answers (raises on a broken contract).

    ``progress`` receives each query's name before it is asked, so a caller that gives up waiting
    can say which query hung; ``trace`` (``ACCELPLUG_TRACE_PLUGINS``) gets one line per answer.
    """
    name = cls.name

    def query(method: str) -> object:
        progress.append(method)
        answer: object = getattr(cls, method)()
        if trace is not None:
            trace(f"{name}.{method}() -> {answer!r}")
        return answer

    available = query("is_available")
    if not isinstance(available, bool):
        raise ContractBreach(f"is_available() returned {available!r} ({type(available).__name__}); expected a bool")
    reason = query("unavailable_reason")
    if reason is not None and not (isinstance(reason, str) and reason.strip()):
        raise ContractBreach(f"unavailable_reason() returned {reason!r}; expected None or a sentence")
    if available and reason is not None:
        raise ContractBreach(f"is_available() is True but unavailable_reason() returned {reason!r}; expected None")
    if not available and reason is None:
        raise ContractBreach("is_available() is False but unavailable_reason() returned None; expected the cause")
    strategies = _names(query("supported_strategies"), "supported_strategies")
    precisions = _names(query("supported_precisions"), "supported_precisions")
    if not available:
        return AcceleratorStatus(name, False, reason, 0, 0, strategies, precisions)
    count = _count(query("device_count"), "device_count", 1)
    auto = _count(query("auto_device_count"), "auto_device_count", 1)
    if auto > count:
        raise ContractBreach(f"auto_device_count() returned {auto}, more than device_count() ({count})")
    if single_device_only(strategies):
        auto = 1
    return AcceleratorStatus(name, True, None, count, auto, strategies, precisions)
