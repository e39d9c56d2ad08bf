"""``LitLogger`` has Lightning 2.6's signature and, without the ``litlogger`` package, an error naming it."""

from __future__ import annotations

import importlib.util
import inspect

import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.loggers import LitLogger

lightning = pytest.importorskip("lightning", reason="the signature is compared with lightning's")


def test_litlogger_takes_lightnings_arguments_with_lightnings_defaults() -> None:
    from lightning.pytorch.loggers import LitLogger as Theirs

    ours, theirs = inspect.signature(LitLogger), inspect.signature(Theirs)
    assert [(p.name, p.default) for p in ours.parameters.values()] == [
        (p.name, p.default) for p in theirs.parameters.values()
    ]
    assert accelplug.LitLogger is LitLogger


def test_litlogger_without_its_package_names_it() -> None:
    if importlib.util.find_spec("litlogger") is not None:
        pytest.skip("litlogger is installed here: there is no missing-package error to see")
    with pytest.raises(MisconfigurationException, match=r"'litlogger' package, which is not installed: pip install"):
        LitLogger(name="run", teamspace="team")
