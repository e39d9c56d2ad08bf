"""The import redirect itself: a ``sys.meta_path`` finder whose loader hands back accelplug's own module.

How a redirected import runs: Python asks the finders on ``sys.meta_path`` in turn; ours is put first by
:func:`use_accelplug_for_lightning`, so for a name under one of :data:`REDIRECTS` it answers before the finder
that would load the installed Lightning. Its loader imports the accelplug module and puts *that object* in
``sys.modules`` under the Lightning name; the import system returns whatever ``sys.modules`` holds under the
name once the loader ran, so ``sys.modules["lightning.pytorch"] is sys.modules["accelplug.pytorch"]``. The
blank module the import system creates for the spec is thrown away, so accelplug's modules keep their own
``__name__``, ``__spec__`` and ``__package__`` (their relative imports keep working).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from types import ModuleType

from ..envvars import KNOWN_VARIABLES
from ..errors import MisconfigurationException

__all__ = [
    "ENV_VAR",
    "REDIRECTS",
    "LightningAlreadyImportedError",
    "activate_from_environment",
    "redirect_active",
    "redirect_target",
    "use_accelplug_for_lightning",
]

#: The environment variable that turns the redirect on (a switch: 1/0, true/false, yes/no, on/off).
ENV_VAR = "ACCELPLUG_LIGHTNING_REDIRECT"

# accelplug warns about an ACCELPLUG_* variable it does not read (a typo, most often). This one is read only where
# the redirect is used, so it is declared by this module: set but never read (no launcher, no call), it still
# gets that warning, which is then true.
KNOWN_VARIABLES.setdefault(
    ENV_VAR, "1: Lightning's module names import accelplug (python -m accelplug.interop and its child processes)"
)

#: Lightning's import names and the accelplug package that stands for each, most specific first.
#: ``lightning`` itself maps to ``accelplug``; below it only ``pytorch`` and ``fabric`` exist in Lightning 2.6's
#: API, so ``lightning.<anything else>`` is refused rather than reaching accelplug's own internals.
REDIRECTS: Mapping[str, str] = {
    "lightning.pytorch": "accelplug.pytorch",
    "lightning.fabric": "accelplug.fabric",
    "pytorch_lightning": "accelplug.pytorch",
    "lightning_fabric": "accelplug.fabric",
    "lightning": "accelplug",
}

_lock = threading.Lock()


class LightningAlreadyImportedError(MisconfigurationException):
    """The redirect was asked for after Lightning itself was imported in this process.

    From then on two copies of ``LightningModule``, ``Trainer`` and every callback would exist, and an object
    made from one would fail ``isinstance`` against the other. ``modules`` lists the Lightning modules found.
    """

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = list(modules)
        shown = ", ".join(repr(name) for name in self.modules[:5])
        more = f" and {len(self.modules) - 5} more" if len(self.modules) > 5 else ""
        super().__init__(
            f"cannot run Lightning's names on accelplug: Lightning is already imported in this process "
            f"({shown}{more}). The redirect must be turned on before anything imports Lightning: call "
            "accelplug.interop.use_accelplug_for_lightning() first thing, or start the program with "
            "`python -m accelplug.interop script.py`."
        )


def redirect_target(name: str) -> str | None:
    """The accelplug module that stands for the Lightning module ``name``, or None when ``name`` is not Lightning's.

    ``lightning.pytorch.callbacks`` -> ``accelplug.pytorch.callbacks``; ``pytorch_lightning`` ->
    ``accelplug.pytorch``; ``lightning_utilities`` (another distribution) -> None.
    """
    matched = _match(name)
    return None if matched is None else matched[1]


def _match(name: str) -> tuple[str, str] | None:
    """The :data:`REDIRECTS` prefix that covers ``name`` and the accelplug name it gives, or None."""
    for prefix, target in REDIRECTS.items():
        if name == prefix or name.startswith(prefix + "."):
            return prefix, target + name[len(prefix) :]
    return None


def _is_lightning_name(name: str) -> bool:
    return redirect_target(name) is not None


def _not_found(name: str, why: str) -> ModuleNotFoundError:
    return ModuleNotFoundError(
        f"No module named {name!r}: Lightning's names run on accelplug in this process (accelplug.interop), {why}",
        name=name,
    )


class _AliasLoader(importlib.abc.Loader):
    """Loads a Lightning name by importing accelplug's module and registering that very object under the name."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the import system's blank module; exec_module replaces it in sys.modules

    def exec_module(self, module: ModuleType) -> None:
        real = importlib.import_module(self.target)
        sys.modules[module.__name__] = real


class _LightningAliasFinder(importlib.abc.MetaPathFinder):
    """Answers for every name under :data:`REDIRECTS`; every other name is left to the finders after it."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        matched = _match(fullname)
        if matched is None:
            return None
        prefix, accelplug_name = matched
        if prefix == "lightning" and fullname != "lightning":
            # lightning.<x> with x neither pytorch nor fabric: Lightning 2.6 has no public module there
            raise _not_found(fullname, "and only lightning.pytorch and lightning.fabric stand below 'lightning'")
        try:
            found = importlib.util.find_spec(accelplug_name)
        except ModuleNotFoundError:  # a parent is a plain module, not a package
            found = None
        if found is None:
            # Answering None would let the path finder look for the name in the parent's folder, which is
            # accelplug's: it would load a second copy of an accelplug module under the Lightning name.
            raise _not_found(fullname, f"and accelplug has no {accelplug_name!r} to stand for it")
        return importlib.machinery.ModuleSpec(
            fullname,
            _AliasLoader(accelplug_name),
            is_package=found.submodule_search_locations is not None,
        )


_FINDER = _LightningAliasFinder()


def redirect_active() -> bool:
    """Whether Lightning's names resolve to accelplug in this process."""
    return _FINDER in sys.meta_path


def _foreign_lightning_modules() -> list[str]:
    """The Lightning modules in ``sys.modules`` that are not accelplug's (imported before the redirect)."""
    foreign = []
    for name, module in list(sys.modules.items()):
        if not _is_lightning_name(name) or module is None:
            continue
        target = redirect_target(name)
        if sys.modules.get(target or "") is not module:
            foreign.append(name)
    return sorted(foreign)


def use_accelplug_for_lightning() -> None:
    """From now on, in this process, ``import lightning`` (and its other names) imports accelplug.

    Call it before anything imports Lightning; calling it again is harmless. Raises
    :class:`LightningAlreadyImportedError` when a Lightning module is already imported.
    """
    with _lock:
        foreign = _foreign_lightning_modules()
        if foreign:
            raise LightningAlreadyImportedError(foreign)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        importlib.invalidate_caches()


def activate_from_environment(environ: Mapping[str, str] | None = None) -> bool:
    """Turn the redirect on when :data:`ENV_VAR` says so; returns whether it is on afterwards.

    The variable is a switch (1/0, true/false, yes/no, on/off, any case; unset or empty means off). Any other
    value raises ``MisconfigurationException`` naming it, the accepted words and the closest one.
    """
    from ..envvars import env_flag

    env = os.environ if environ is None else environ
    if env_flag(ENV_VAR, default=False, environ=env):
        use_accelplug_for_lightning()
    return redirect_active()
