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

__all__ = [
    "Requirement",
    "TrackerNotInstalledError",
    "import_tracker",
    "installed_at_least",
    "module_found",
    "require_tracker",
]


class TrackerNotInstalledError(MisconfigurationException, ModuleNotFoundError):
    """A tracker logger was asked for but its package is missing or too old: also the ``ModuleNotFoundError``
    Lightning's loggers raise then."""

    def __init__(self, logger: str, package: str, extra: str, problem: str) -> None:
        self.logger = logger
        self.package = package
        self.extra = extra
        self.problem = problem
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


def installed_at_least(module: str, distribution: str, minimum: str) -> bool:
    """Whether ``module`` can be imported from ``distribution`` >= ``minimum`` (Lightning's availability flags)."""
    if not module_found(module):
        return False
    try:
        return _version_tuple(importlib.metadata.version(distribution)) >= _version_tuple(minimum)
    except importlib.metadata.PackageNotFoundError:
        return True


class Requirement:
    """Lightning's availability flag for a tracker (``_WANDB_AVAILABLE``): true when the package can be imported at
    the version needed, asked each time it is read (a package blocked or installed since counts). Scripts and tests
    replace it with a plain bool at Lightning's path; :func:`require_tracker` obeys that instead."""

    def __init__(self, module: str, distribution: str, minimum: str) -> None:
        self.module, self.distribution, self.minimum = module, distribution, minimum

    def __bool__(self) -> bool:
        return installed_at_least(self.module, self.distribution, self.minimum)

    def __repr__(self) -> str:
        return f"Requirement({self.distribution}>={self.minimum}: {'met' if self else 'not met'})"


def require_tracker(
    logger: str, module: str, distribution: str, extra: str, minimum: str, *, available: object = None
) -> None:
    """Raise ``TrackerNotInstalledError`` unless ``module`` can be imported from ``distribution`` >= ``minimum``.

    ``available``: Lightning's flag for the package (``_MLFLOW_AVAILABLE``) as the script sees it at Lightning's
    path; when given, it decides whether the package is there, as in Lightning, where tests put a stand-in module
    in ``sys.modules`` and set the flag."""
    if available is not None and not isinstance(available, Requirement):
        if not available:
            raise TrackerNotInstalledError(logger, distribution, extra, "is not installed")
        return
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
