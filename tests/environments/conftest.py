"""Every test here starts from an environment no launcher touched, and sets the variables it is about."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import pytest

#: Variables a launcher (Slurm, torchrun, MPI, LSF, Kubeflow) sets; cleared so the machine's own do not leak in.
_PREFIXES = ("SLURM_", "SLURMD_", "OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "JSM_", "LSB_", "TORCHELASTIC_")
_NAMES = (
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "NODE_RANK",
)

Launch = Callable[..., None]


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(_PREFIXES) or name in _NAMES:
            monkeypatch.delenv(name)


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> Launch:
    """``launched(VARIABLES, NAME=value, ...)``: this process as that launcher started it (``None`` unsets)."""

    def apply(variables: Mapping[str, str] | None = None, **changes: str | None) -> None:
        for name, value in {**(variables or {}), **changes}.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)

    return apply


def ask(env: object, answer: str) -> object:
    """``env``'s answer by name, whether a property (``main_port``) or a method (``world_size``)."""
    value = getattr(env, answer)
    return value() if callable(value) else value
