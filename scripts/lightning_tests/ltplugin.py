"""The pytest plugin the tool loads (``-p ltplugin``) into every run of Lightning's tests, on either framework.

* Records each test's outcome, phase by phase, to ``$LT_RESULTS`` (JSON lines): the node id, the outcome, the
  first line of the error, the exception's type, and the files and lines of the traceback (innermost last),
  which the report and the classifier read.
* On accelplug (``LT_FRAMEWORK=accelplug``) with ``LT_PLACEHOLDERS=1``: installs the placeholder import
  (:mod:`ltshim`) before any conftest is imported, and drops a ``filterwarnings`` mark whose warning class
  accelplug lacks (the conftest marks every test ``error::lightning...LightningDeprecationWarning``; pytest would
  otherwise error every test while parsing it; accelplug never raises a class it does not have).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

_FRAMEWORK = os.environ.get("LT_FRAMEWORK", "lightning")
_PLACEHOLDERS = os.environ.get("LT_PLACEHOLDERS", "0") in ("1", "harness")

if _FRAMEWORK == "accelplug" and _PLACEHOLDERS:
    import ltshim

    ltshim.install()


def _warning_class_resolves(spec: str) -> bool:
    parts = spec.split(":")
    if len(parts) < 3 or not parts[2].strip():
        return True
    category = parts[2].strip()
    module, _, name = category.rpartition(".")
    if not module:
        return True
    try:
        __import__(module)
        return hasattr(sys.modules[module], name)
    except ImportError:
        return False


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if _FRAMEWORK != "accelplug":
        return
    for item in items:
        kept = []
        for mark in item.own_markers:
            if mark.name == "filterwarnings" and not all(_warning_class_resolves(a) for a in mark.args):
                continue
            kept.append(mark)
        item.own_markers[:] = kept


def _traceback_entries(report: pytest.TestReport) -> list[list[Any]]:
    longrepr = report.longrepr
    chain = getattr(longrepr, "chain", None)
    entries: list[list[Any]] = []
    tracebacks = [element[0] for element in chain] if chain else [getattr(longrepr, "reprtraceback", None)]
    traceback = tracebacks[-1] if tracebacks else None
    for entry in getattr(traceback, "reprentries", []) or []:
        location = getattr(entry, "reprfileloc", None)
        if location is not None:
            lines = getattr(entry, "lines", []) or []
            source = next((line[1:].strip() for line in lines if line.startswith(">")), "")
            entries.append([location.path, location.lineno, source])
    return entries


def _detail(report: pytest.TestReport) -> list[str]:
    """The error's own lines (pytest's ``E`` lines), at most 20: the assertion's diff, the whole message."""
    lines = [line[4:] for line in report.longreprtext.splitlines() if line.startswith("E   ")]
    return [line[:300] for line in lines[:20]]


def _first_error_line(report: pytest.TestReport) -> tuple[str, str]:
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        message = crash.message
    elif isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        message = str(longrepr[2])
    else:
        message = str(longrepr)
    first = next((line for line in message.splitlines() if line.strip()), "")
    kind = first.split(":", 1)[0] if ":" in first and " " not in first.split(":", 1)[0] else ""
    return first[:500], kind


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get("LT_RESULTS")
    if not path:
        return
    if report.when == "call" or report.outcome != "passed":
        message, kind = _first_error_line(report) if report.outcome != "passed" else ("", "")
        record = {
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "xfail": bool(getattr(report, "wasxfail", None) is not None),
            "message": message,
            "kind": kind,
            "duration": round(report.duration, 3),
        }
        if report.outcome == "failed":
            record["traceback"] = _traceback_entries(report)
            record["sections"] = [name for name, _ in report.sections]
            record["detail"] = _detail(report)
        with warnings.catch_warnings(), open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    path = os.environ.get("LT_RESULTS")
    if not path or report.outcome != "failed":
        return
    message, kind = _first_error_line(report)  # type: ignore[arg-type]
    errors = [line[4:].strip() for line in report.longreprtext.splitlines() if line.startswith("E   ")]
    if message.startswith("ImportError while importing test module") and errors:
        message = errors[-1][:500]  # the import's own error, not pytest's preamble
        kind = message.split(":", 1)[0] if ":" in message else kind
    record = {
        "nodeid": report.nodeid,
        "when": "collect",
        "outcome": "error",
        "message": message,
        "kind": kind,
        "traceback": _traceback_entries(report),  # type: ignore[arg-type]
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
