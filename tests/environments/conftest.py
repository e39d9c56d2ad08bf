"""Every test here starts from an environment no launcher touched, and sets the variables it is about."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from .captured import launcher_variables

Launch = Callable[..., None]


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in launcher_variables():
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
