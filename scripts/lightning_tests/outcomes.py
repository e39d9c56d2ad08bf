"""Reading a run's ``results.jsonl``: one outcome per test, and the error that decided it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The outcomes the table counts, in its column order.
OUTCOMES = ("passed", "failed", "error", "skipped")


@dataclass
class Outcome:
    """One test's result in one run: ``passed``/``failed``/``error``/``skipped`` and the first failing phase."""

    nodeid: str
    outcome: str
    when: str = "call"
    message: str = ""
    kind: str = ""
    traceback: list[list[Any]] = field(default_factory=list)
    detail: list[str] = field(default_factory=list)

    @property
    def file(self) -> str:
        return self.nodeid.split("::")[0]


def _rank(record: dict[str, Any]) -> int:
    """Which phase decides a test: a failing call first, then a failing setup, then teardown, then the rest."""
    if record["outcome"] == "failed":
        return {"call": 0, "setup": 1, "teardown": 2}.get(record["when"], 3)
    return 5


def read(results: Path) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    """``(tests, files)``: each test's outcome by node id, and each file that failed to be collected."""
    by_test: dict[str, list[dict[str, Any]]] = {}
    collect: dict[str, Outcome] = {}
    if not results.exists():
        return {}, {}
    for line in results.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["when"] == "collect":
            collect[record["nodeid"]] = Outcome(
                record["nodeid"], "error", "collect", record["message"], record["kind"], record.get("traceback", [])
            )
            continue
        by_test.setdefault(record["nodeid"], []).append(record)
    tests = {}
    for nodeid, records in by_test.items():
        deciding = min(records, key=_rank)
        if deciding["outcome"] == "failed":
            outcome = "failed" if deciding["when"] == "call" else "error"
        elif any(r["outcome"] == "skipped" for r in records):
            outcome = "skipped"  # skipped, or an expected failure (xfail)
        else:
            outcome = "passed"
        tests[nodeid] = Outcome(
            nodeid,
            outcome,
            deciding["when"],
            deciding.get("message", ""),
            deciding.get("kind", ""),
            deciding.get("traceback", []),
            deciding.get("detail", []),
        )
    return tests, collect


def _function(nodeid: str) -> str:
    return nodeid.split("[")[0]


def with_collection_errors(
    tests: dict[str, Outcome], collect: dict[str, Outcome], expected: dict[str, Outcome]
) -> dict[str, Outcome]:
    """``tests`` keyed by ``expected``'s node ids: an ``error`` for each test of a file that was not collected.

    A parametrised test whose ids render differently (a placeholder standing for a missing enum is named
    ``RunningStage.TESTING`` where Lightning's id is ``test``) is paired with Lightning's by order of
    collection among the unmatched ids of the same function, which the two runs share.
    """
    merged = {nodeid: outcome for nodeid, outcome in tests.items() if nodeid in expected}
    unmatched_after: dict[str, list[str]] = {}
    for nodeid in tests:  # insertion order: the order the run recorded them, i.e. collection order
        if nodeid not in expected:
            unmatched_after.setdefault(_function(nodeid), []).append(nodeid)
    for nodeid in expected:
        if nodeid in merged:
            continue
        candidates = unmatched_after.get(_function(nodeid))
        if candidates:
            merged[nodeid] = tests[candidates.pop(0)]
            continue
        file = nodeid.split("::")[0]
        if file in collect:
            failure = collect[file]
            merged[nodeid] = Outcome(
                nodeid, "error", "collect", failure.message, failure.kind, failure.traceback, failure.detail
            )
        else:
            merged[nodeid] = Outcome(nodeid, "error", "missing", "test not collected in this run", "", [])
    return merged
