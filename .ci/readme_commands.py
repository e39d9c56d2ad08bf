"""Print one of the README's two one-line commands: ``main`` (the first) or ``test`` (the second)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

blocks = re.findall(r"```bash\n(.+?)\n```", (Path(__file__).resolve().parents[1] / "README.md").read_text(), re.S)
commands = [b.strip() for b in blocks[:2]]
if len(commands) != 2 or any("\n" in c for c in commands):
    sys.exit("README.md must start with two one-line ```bash blocks: the main job, then the tests")
print(commands[{"main": 0, "test": 1}[sys.argv[1]]])
