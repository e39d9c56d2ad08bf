"""``lightning.pytorch.utilities.upgrade_checkpoint``'s path: ``python -m`` it to upgrade checkpoint files in place
(accelplug's program, :mod:`accelplug.cli.upgrade_checkpoint`)."""

from __future__ import annotations

from ...cli.upgrade_checkpoint import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
