"""Device backends torch loads itself, and what to say when one of them breaks ``import torch``.

torch imports every entry point of the group ``torch.backends`` when it is imported (device-backend autoloading,
switched off by ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``), so a backend package that raises there makes ``import
torch`` itself fail, with a ``RuntimeError`` that names the entry point only. ``import accelplug`` does not import
torch and so survives; every command that needs torch would not. ``accelplug list`` and ``accelplug env`` exist
to diagnose exactly this machine, so the CLI runs them again with autoloading off and reports the backend as a
failed plugin: its entry point, the distribution that installed it, and the error it raised. Other commands stop
with the same facts and the remedy, rather than run without the device the user installed.

torch-free on purpose: it runs before torch can be imported.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from dataclasses import asdict, dataclass
from importlib import metadata

__all__ = [
    "AUTOLOAD_ENV",
    "FAILURE_ENV",
    "GROUP",
    "TorchBackendFailure",
    "describe_import_failure",
    "recorded_failure",
    "torch_import_failure",
]

GROUP = "torch.backends"
AUTOLOAD_ENV = "TORCH_DEVICE_BACKEND_AUTOLOAD"
#: Carries the failure into the CLI's second run (underscored: not one of the ``ACCELPLUG_*`` settings).
FAILURE_ENV = "_ACCELPLUG_TORCH_BACKEND_FAILURE"
_TORCH_MESSAGE = re.compile(r"Failed to load the backend extension: (?P<name>[^.\s]+)")


@dataclass(frozen=True)
class TorchBackendFailure:
    """A ``torch.backends`` entry point that raised while torch imported it."""

    entry_point: str
    #: ``module:function`` the entry point names.
    target: str | None
    distribution: str | None
    version: str | None
    #: The backend's own exception, as ``Type: message`` (torch wraps it in its RuntimeError).
    error: str

    @property
    def plugin(self) -> str:
        """How ``accelplug list`` names it among failed plugins."""
        return f"{GROUP}:{self.entry_point}"

    def describe(self) -> str:
        release = " ".join(filter(None, (self.distribution, self.version)))
        where = f" (distribution {release})" if self.distribution else ""
        target = f" = {self.target}" if self.target else ""
        return (
            f"torch's device-backend autoloading failed on entry point {self.entry_point!r}{target} in group "
            f"{GROUP!r}{where}: {self.error}. Every `import torch` fails while it is installed: fix or uninstall "
            f"that package, or set {AUTOLOAD_ENV}=0 (then import the backend by hand if you need its device)."
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def describe_import_failure(exc: BaseException) -> TorchBackendFailure | None:
    """The failing backend behind an exception from ``import torch``, or None when it is not torch's
    autoloading failure."""
    match = _TORCH_MESSAGE.search(str(exc))
    if match is None:
        return None
    name = match.group("name")
    found = [ep for ep in metadata.entry_points(group=GROUP) if ep.name == name]
    entry_point = found[0] if found else None
    dist = getattr(entry_point, "dist", None)
    cause = exc.__cause__ or exc.__context__
    error = "".join(traceback.format_exception_only(type(cause), cause)).strip() if cause else str(exc)
    return TorchBackendFailure(
        entry_point=name,
        target=entry_point.value if entry_point is not None else None,
        distribution=getattr(dist, "name", None),
        version=getattr(dist, "version", None),
        error=error.splitlines()[-1] if error else "no message",
    )


def torch_import_failure() -> TorchBackendFailure | None:
    """Import torch; the failing autoloaded backend when that is what stops it (other errors propagate)."""
    try:
        import torch  # noqa: F401 - imported for its side effect: the backends it autoloads
    except RuntimeError as exc:
        failure = describe_import_failure(exc)
        if failure is None:
            raise
        return failure
    return None


def recorded_failure() -> TorchBackendFailure | None:
    """The failure the CLI's first run recorded before running again with autoloading off, if any."""
    raw = os.environ.get(FAILURE_ENV)
    if not raw:
        return None
    try:
        return TorchBackendFailure(**json.loads(raw))
    except (TypeError, ValueError):
        return None
