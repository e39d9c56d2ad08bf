"""Keep a command's machine-readable output clean of whatever plugins print.

``accelplug list --json`` loads plugins, and a plugin may print at import: through ``print`` or by
writing to file descriptor 1 directly (a C library's banner, ``os.write(1, ...)``). Either would
corrupt the JSON on stdout. :func:`stdout_reserved` points descriptor 1 at stderr while the command
works, so such output still reaches the user's terminal, and the command's own text is written to
the real stdout at the end, alone.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator

__all__ = ["stdout_reserved"]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextlib.contextmanager
def stdout_reserved() -> Iterator[Callable[[str], None]]:
    """Within the block, stdout (descriptor 1 included) goes to stderr; text given to the yielded
    function is written to the real stdout when the block ends."""
    pieces: list[str] = []
    try:
        stdout_fd = sys.stdout.fileno()
        stderr_fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        # No real descriptors (an embedding, a test runner's capture): guard Python-level output only.
        with contextlib.redirect_stdout(sys.stderr):
            yield pieces.append
        sys.stdout.write("".join(pieces))
        sys.stdout.flush()
        return
    sys.stdout.flush()
    saved = os.dup(stdout_fd)
    os.dup2(stderr_fd, stdout_fd)
    try:
        yield pieces.append
        sys.stdout.flush()  # what plugins printed through Python goes to stderr, before our text
        _write_all(saved, "".join(pieces).encode(sys.stdout.encoding or "utf-8", errors="replace"))
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, stdout_fd)
        os.close(saved)
