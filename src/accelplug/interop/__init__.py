"""Run code written for Lightning on accelplug without editing it: the ``lightning`` names resolve to accelplug.

A project that owns its code migrates by changing ``import lightning as L`` to ``import accelplug as L``. A
library built on Lightning (a model zoo whose classes subclass ``lightning.pytorch.LightningModule`` inside the
library) cannot be edited, and neither can Lightning's own test suite. This room offers an opt-in under which
the module names ``lightning``, ``lightning.pytorch``, ``pytorch_lightning``, ``lightning.fabric`` and
``lightning_fabric``, and every module below them, *are* accelplug's modules (``accelplug``,
``accelplug.pytorch``, ``accelplug.fabric`` and theirs): the same module objects under two names, so a class
reached through either name is one class and ``isinstance`` holds across both.

Nothing changes unless asked. The three ways to ask:

* a call, before anything imports Lightning: :func:`use_accelplug_for_lightning`;
* the launcher: ``python -m accelplug.interop script.py [args]`` or ``python -m accelplug.interop -m pkg.mod
  [args]``; it also turns the redirect on in the Python processes the script starts (spawned workers, ``python``
  subprocesses) through :data:`ENV_VAR`;
* the environment variable :data:`ENV_VAR` (``ACCELPLUG_LIGHTNING_REDIRECT=1``), read by
  :func:`activate_from_environment` (which the launcher's child processes call when they start, and which an
  entry point or a ``conftest.py`` may call itself). A value other than a switch word is refused, not guessed.

The redirect works beside an installed Lightning: once on, the alias wins over the installed package. It must
come first: when a Lightning module is already imported in the process, two copies of every class would exist
side by side, so turning the redirect on then raises :class:`LightningAlreadyImportedError` naming the module.
A Lightning module accelplug has no counterpart for raises ``ModuleNotFoundError`` naming both names.

This package is not imported by ``import accelplug``; it imports only the standard library and accelplug's
torch-free ``errors``/``envvars`` at the top.
"""

from __future__ import annotations

from ._redirect import (
    ENV_VAR,
    REDIRECTS,
    LightningAlreadyImportedError,
    activate_from_environment,
    redirect_active,
    redirect_target,
    use_accelplug_for_lightning,
)

__all__ = [
    "ENV_VAR",
    "REDIRECTS",
    "LightningAlreadyImportedError",
    "activate_from_environment",
    "redirect_active",
    "redirect_target",
    "use_accelplug_for_lightning",
]
