"""The INFO lines Lightning's Trainer gives for a limit of one batch (``1``) against the whole epoch (``1.0``), and
for ``fast_dev_run``: the same lines, on the ``accelplug.trainer`` logger, and none for the defaults.

Both Trainers are built in one fresh Python for every case at once: what a framework logs depends on process-wide
state the rest of the suite changes (the rank Lightning fixes when it is first imported, which ``lightning_utilities``
logger its INFO lines go through, a library's ``logging.config.dictConfig`` disabling every existing logger), and a
fresh process starts from none of it, as a user's script does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.processes import child_env

pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

CASES: list[dict[str, Any]] = [
    {"limit_train_batches": 1},
    {"limit_train_batches": 1.0},
    {"limit_val_batches": 1},
    {"limit_test_batches": 1.0},
    {"limit_predict_batches": 1},
    {"overfit_batches": 1.0},
    {"overfit_batches": 1, "limit_val_batches": 1, "limit_test_batches": 1},
    {"val_check_interval": 1},
    {"val_check_interval": 1.0},
    {"fast_dev_run": True, "limit_val_batches": 1},
    {},
]

#: Each framework's Trainer for each case; the INFO lines about limits and fast_dev_run, in order, as JSON.
_CHILD = """
import json, logging, sys, warnings
warnings.simplefilter("ignore")
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage().rstrip("."))
logging.getLogger().addHandler(Keep())
logging.getLogger().setLevel(logging.INFO)
import accelplug, lightning
for name in ("lightning", "lightning.pytorch", "lightning.fabric", "lightning_utilities", "accelplug"):
    logging.getLogger(name).setLevel(logging.INFO)
    logging.getLogger(name).propagate = True
out = []
for options in json.loads(sys.argv[1]):
    lines = {}
    for name, framework in (("accelplug", accelplug), ("lightning", lightning)):
        records.clear()
        framework.Trainer(logger=False, enable_progress_bar=False, **options)
        lines[name] = [m for m in records if "configured so" in m or "fast_dev_run" in m]
    out.append(lines)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def lines() -> list[dict[str, list[str]]]:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(CASES)],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
    )
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "case",
    range(len(CASES)),
    ids=[",".join(f"{k}={v}" for k, v in options.items()) or "defaults" for options in CASES],
)
def test_the_trainer_says_what_a_limit_of_one_means_as_lightning_does(
    lines: list[dict[str, list[str]]], case: int
) -> None:
    ours, theirs = lines[case]["accelplug"], lines[case]["lightning"]
    assert ours == theirs
    assert bool(ours) == bool(CASES[case])
