"""Each tracker's package is an optional extra; a missing or too old one is a clear error naming the extra.

The check runs when a logger is constructed (cheap: package metadata and the import system's finder,
without importing the package: ``import wandb`` alone takes seconds), so a typo in a config fails at
once rather than at the first metric. The import itself happens when the run is first needed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from types import ModuleType

from ..errors import MisconfigurationException

__all__ = ["TrackerNotInstalledError", "import_tracker", "module_found", "require_tracker"]


class TrackerNotInstalledError(MisconfigurationException):
    """A tracker logger was asked for but its package is missing or too old."""

    def __init__(self, logger: str, package: str, extra: str, problem: str) -> None:
        self.logger = logger
        self.package = package
        self.extra = extra
        super().__init__(
            f"{logger} needs the {package!r} package, which {problem}. "
            f'Install it with: pip install "accelplug[{extra}]"'
        )


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def module_found(module: str) -> bool:
    """Whether ``module`` can be imported, asked of the import system's finder without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: the module was blocked (sys.modules entry set to None)
        return False


def require_tracker(logger: str, module: str, distribution: str, extra: str, minimum: str) -> None:
    """Raise ``TrackerNotInstalledError`` unless ``module`` can be imported from ``distribution`` >= ``minimum``."""
    if not module_found(module):
        raise TrackerNotInstalledError(logger, distribution, extra, "is not installed")
    try:
        installed = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return  # importable without metadata (a source checkout): trust it
    if _version_tuple(installed) < _version_tuple(minimum):
        raise TrackerNotInstalledError(
            logger, distribution, extra, f"is installed at version {installed}, older than the {minimum} it needs"
        )


def import_tracker(logger: str, module: str, distribution: str, extra: str) -> ModuleType:
    """Import the tracker's package, turning a failure into ``TrackerNotInstalledError`` with the cause."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TrackerNotInstalledError(logger, distribution, extra, f"could not be imported ({exc})") from exc
