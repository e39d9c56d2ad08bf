"""``lightning.pytorch.utilities.imports``' flags at accelplug's path, with Lightning's answers.

Published projects import these private flags to decide whether to use an optional package (Lightning's own
autoencoder example reads ``_TORCHVISION_AVAILABLE``; found by ``tests/lightning_compat/projects/
pl_autoencoder_cli.py``, whose import failed under accelplug). Every flag Lightning 2.6.6 defines there must
exist after the import swap and be as true or false as Lightning's in this environment.
"""

from __future__ import annotations

import importlib

import pytest

lightning_imports = pytest.importorskip(
    "lightning.pytorch.utilities.imports", reason="the flags are compared with Lightning's, not installed here"
)

FLAGS = sorted(name for name in vars(lightning_imports) if name.startswith("_") and name[1:2].isupper())


def test_lightning_defines_the_flags_compared() -> None:
    assert "_TORCHVISION_AVAILABLE" in FLAGS and "_RICH_AVAILABLE" in FLAGS and len(FLAGS) >= 10


@pytest.mark.parametrize("path", ["accelplug.pytorch.utilities.imports", "accelplug.utilities.imports"])
@pytest.mark.parametrize("name", FLAGS)
def test_each_flag_answers_as_lightning_does(path: str, name: str) -> None:
    ours = getattr(importlib.import_module(path), name)
    assert bool(ours) == bool(getattr(lightning_imports, name))


def test_a_missing_requirement_says_what_to_install() -> None:
    from accelplug.pytorch.utilities.imports import _TORCHVISION_AVAILABLE

    if _TORCHVISION_AVAILABLE:
        pytest.skip("torchvision is installed here: nothing is missing to name")
    assert "torchvision" in str(_TORCHVISION_AVAILABLE)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    module = importlib.import_module("accelplug.pytorch.utilities.imports")
    with pytest.raises(AttributeError, match="_NOT_A_FLAG"):
        module._NOT_A_FLAG  # noqa: B018


def test_try_import_module_warns_for_a_package_that_fails_on_import() -> None:
    from accelplug.utilities.imports import _try_import_module

    assert _try_import_module("json")
    with pytest.warns(UserWarning, match="no_such_module_for_accelplug"):
        assert not _try_import_module("no_such_module_for_accelplug")
