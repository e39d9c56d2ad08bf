"""What a run shows on the console without any set-up: Lightning's policy, so a migrated script prints what it did.

- **Log lines.** accelplug's INFO records (``GPU available: …``, `` `Trainer.fit` stopped: …``, ``Restoring states
  from …``, the profiler's report) show on standard error, as Lightning shows its own: the ``accelplug`` logger is
  at INFO, and its handler writes a record while the program has configured no logging (the root logger has no
  handler). Once it has (``logging.basicConfig``, pytest's capture), the records reach the program's handlers by
  propagation instead, and the handler stays quiet, so no line shows twice and ``caplog`` sees them. (Lightning
  turns propagation off where it adds its handler; deciding at each record keeps both cases right whenever the
  program configures logging.) Silence them with ``logging.getLogger("accelplug").setLevel(logging.WARNING)``.
- **Warnings raised from accelplug's own files** print as one line, ``file:line: message``, without the source line
  of the ``warnings.warn`` call that says nothing to the user (Lightning formats its own warnings the same way).
  Every other warning keeps Python's format.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

__all__ = ["install"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_python_format = warnings.formatwarning


def _format_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    if os.path.abspath(filename).startswith(_PACKAGE_DIR):
        return f"{filename}:{lineno}: {message}\n"
    return _python_format(message, category, filename, lineno, line)


class _WhileUnconfigured(logging.StreamHandler):  # type: ignore[type-arg]
    """Standard error, for a program that configured no logging; otherwise the program's handlers show the record."""

    def emit(self, record: logging.LogRecord) -> None:
        if not logging.getLogger().handlers:
            self.stream = sys.stderr  # the current one: a redirect (contextlib.redirect_stderr, capsys) is followed
            super().emit(record)


def install() -> None:
    """Set both, once (``import accelplug`` calls it)."""
    logger = logging.getLogger("accelplug")
    if logger.level == logging.NOTSET:  # a level the program set before importing accelplug stays
        logger.setLevel(logging.INFO)
    if not any(isinstance(h, _WhileUnconfigured) for h in logger.handlers):
        logger.addHandler(_WhileUnconfigured())
    if warnings.formatwarning is _python_format:
        warnings.formatwarning = _format_warning
