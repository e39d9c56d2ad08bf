"""What the Lightning-suite tool's parts share: where the tests are, which names are Lightning's, which are private."""

from __future__ import annotations

import os
from pathlib import Path

#: The tag of Lightning's repository whose tests are run (its lightning/pytorch and lightning/fabric equal the
#: 2.6.6 wheel's sources except core/saving.py).
LIGHTNING_TAG = "2.6.5"

#: Where ``materialize`` writes ``tests/tests_pytorch`` and ``tests/tests_fabric`` (outside the repository).
DEFAULT_CACHE = Path(os.environ.get("LIGHTNING_TESTS_CACHE", f"/work/cache/lightning-{LIGHTNING_TAG}"))
DEFAULT_TESTS_DIR = DEFAULT_CACHE / "tests"

#: The top-level import names that mean Lightning.
LIGHTNING_ROOTS = frozenset({"lightning", "pytorch_lightning", "lightning_fabric"})


def is_private(dotted: str) -> bool:
    """Whether a dotted name reaches through a private part (``_``-name), not counting dunders."""
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))
