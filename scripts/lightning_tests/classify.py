"""A first sorting of accelplug's failures into issue 29's categories, read from each failure's error and traceback.

The categories (``CATEGORIES``): (a) the test uses Lightning's private internals, (b) a public module path or
name is missing, (c) a public attribute is missing or None, (d) an input Lightning accepts that accelplug
refuses, (e) a different value, or an expected warning/exception missing, (f) a crash inside accelplug, (g) the
same kind of error with another message. This is a heuristic first pass, made to be read and corrected by a
person (``/work/wt/lightning-triage.md`` is the corrected list); ``key`` groups failures that are likely one
behaviour (the missing name, the accelplug function that raised, or the test's failing line).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from outcomes import Outcome

CATEGORIES = {
    "a": "uses Lightning's private internals",
    "b": "public module path or name missing",
    "c": "public attribute missing or None",
    "d": "input Lightning accepts, accelplug refuses",
    "e": "different value, or expected warning/exception missing",
    "f": "crash inside accelplug",
    "g": "same error kind, different message",
}

_PRIVATE_ACCESS = re.compile(
    r"\._[a-zA-Z]\w*|\b_[A-Z][A-Za-z]+\(|\bconnectors?\b|_connector\b|\bfit_loop\.|\bepoch_loop\b|"
    r"\bbatch_progress\b|\b_results\b|\bloops?\.(?:optimization|progress|fetchers)|\b_Result"
)
#: Lightning modules that its API reference does not list and whose names are its own machinery (a test that
#: patches or imports them tests Lightning's internals): the connectors, the loop classes, the launchers...
INTERNAL_MODULES = (
    "lightning.pytorch.trainer.connectors",
    "lightning.pytorch.trainer.configuration_validator",
    "lightning.pytorch.trainer.call",
    "lightning.pytorch.trainer.setup",
    "lightning.pytorch.loops",
    "lightning.pytorch.overrides",
    "lightning.pytorch.strategies.launchers",
    "lightning.fabric.strategies.launchers",
    "lightning.fabric.connector",
    "lightning.pytorch.trainer.connectors",
)
_LIGHTNING_LITERAL = re.compile(r"[\"'](?P<target>(?:lightning|pytorch_lightning|lightning_fabric)\.[\w.]+)[\"']")
_MISSING_ATTR = re.compile(r"has no attribute '(?P<attr>[^']+)'")
_OBJECT_TYPE = re.compile(r"^AttributeError: '(?P<type>[^']+)' object has no attribute")
_PLACEHOLDER = re.compile(r"(?P<name>[\w.]+) is missing in accelplug")
_NO_MODULE = re.compile(r"No module named '(?P<name>[^']+)'")


@dataclass
class Triage:
    category: str
    key: str


@cache
def _functions(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.setdefault(node.name, "\n".join(lines[first - 1 : node.end_lineno]))
    return found


def test_source(tests_dir: Path, nodeid: str) -> str:
    """The source of the test function behind ``nodeid``, decorators included (not its fixtures')."""
    file, _, rest = nodeid.partition("::")
    name = rest.split("[")[0].split("::")[-1]
    path = tests_dir / file
    return _functions(path).get(name, "") if path.is_file() else ""


def _frames(outcome: Outcome) -> list[tuple[str, int, str]]:
    return [(str(path), int(line), str(source)) for path, line, source in outcome.traceback]


def _accelplug_frame(outcome: Outcome) -> tuple[str, int, str] | None:
    inside = [frame for frame in _frames(outcome) if "/src/accelplug/" in frame[0]]
    return inside[-1] if inside else None


def _test_frame(outcome: Outcome) -> tuple[str, int, str] | None:
    inside = [frame for frame in _frames(outcome) if frame[0].startswith(("tests_pytorch", "tests_fabric"))]
    return inside[-1] if inside else None


def _short(path: str) -> str:
    return path.split("/src/")[-1] if "/src/" in path else path


def _canonical(name: str) -> str:
    for spelling, canonical in (("pytorch_lightning", "lightning.pytorch"), ("lightning_fabric", "lightning.fabric")):
        if name == spelling or name.startswith(spelling + "."):
            return canonical + name[len(spelling) :]
    return name


def _is_private(name: str) -> bool:
    """A ``_``-name anywhere in the dotted path, or a module of Lightning's own machinery (``INTERNAL_MODULES``)."""
    name = _canonical(name)
    if any(part.startswith("_") and not part.startswith("__") for part in name.split(".")):
        return True
    return any(name == module or name.startswith(module + ".") for module in INTERNAL_MODULES)


def _patched_target(missing_module: str, test_source: str) -> str | None:
    """The ``"lightning...."`` string in the test (a ``mock.patch`` target) that runs through ``missing_module``."""
    lightning_name = missing_module.replace("accelplug.pytorch", "lightning.pytorch").replace(
        "accelplug.fabric", "lightning.fabric"
    )
    for match in _LIGHTNING_LITERAL.finditer(test_source):
        target = _canonical(match["target"])
        if target.startswith(lightning_name):
            return target
    return None


def classify(outcome: Outcome, test_source: str = "") -> Triage:
    """The category and grouping key of one failing test (``test_source``: the test function's source)."""
    message = outcome.message
    test = _test_frame(outcome)
    test_line = test[2] if test else ""
    where = f"{test[0]}:{test[1]}" if test else outcome.file
    accel = _accelplug_frame(outcome)

    placeholder = _PLACEHOLDER.search(message)
    if placeholder:
        name = placeholder["name"]
        return Triage("a" if _is_private(name) else "b", f"missing {name}")
    if outcome.when == "collect":
        missing = _NO_MODULE.search(message)
        return Triage("b", f"file not importable: {missing['name'] if missing else message[:80]}")
    no_module = _NO_MODULE.search(message)
    if no_module and no_module["name"].split(".")[0] in ("lightning", "pytorch_lightning", "lightning_fabric"):
        name = no_module["name"]
        return Triage("a" if _is_private(name) else "b", f"missing {name}")
    attr = _MISSING_ATTR.search(message)
    if attr and outcome.kind == "AttributeError":
        name = attr["attr"]
        owner = _OBJECT_TYPE.match(message)
        owner_name = owner["type"] if owner else message.split("'")[1] if "'" in message else "?"
        if (name.startswith("_") and not name.startswith("__")) or _PRIVATE_ACCESS.search(test_line):
            return Triage("a", f"private {owner_name}.{name}")
        if owner_name == "NoneType":
            return Triage("c", f"None where Lightning has an object: {where} `{test_line[:80]}`")
        if message.startswith("AttributeError: module"):
            module = message.split("'")[1]
            target = _patched_target(f"{module}.{name}", test_source)
            if target is not None:
                return Triage("a" if _is_private(target) else "b", f"patch target missing: {target}")
            return Triage("b", f"missing {owner_name}.{name}")
        return Triage("c", f"missing attribute {owner_name}.{name}")
    if re.search(r"does not have the attribute '_[a-z]", message):  # mock.patch of a private attribute
        return Triage("a", f"patched private attribute: {message.split(chr(39))[-2]}")
    if _PRIVATE_ACCESS.search(test_line) or ("mock.patch" in test_line and "._" in test_line):
        return Triage("a", f"private access in {where}")
    if "Timeout" in message:
        return Triage("f", f"hang/timeout in {where}")
    if message.startswith("Failed: DID NOT RAISE") or message.startswith("Failed: DID NOT WARN"):
        return Triage("e", f"{message.split(chr(10))[0][:60]} at {where}")
    if "Regex pattern did not match" in message:
        if "warnings emitted" in message:
            return Triage("e", f"expected warning missing at {where}")
        return Triage("g", f"other message at {where}")
    if "ltshim._PlaceholderMeta" in message:  # a placeholder used as an exception or warning class
        return Triage("b", f"placeholder used as a class at {where}")
    if outcome.kind in ("AssertionError", "assert") or message.startswith("assert "):
        return Triage("e", f"different value at {where} `{test_line[:80]}`")
    if accel is not None:
        raiser = f"{_short(accel[0])}:{accel[1]}"
        if outcome.kind.endswith("MisconfigurationException") or "Misconfiguration" in outcome.kind:
            return Triage("d", f"refused by {raiser}: {_normalise(message)[:100]}")
        if outcome.kind == "TypeError" and ("unexpected keyword" in message or "positional argument" in message):
            return Triage("d", f"signature differs: {_normalise(message)[:100]}")
        return Triage("f", f"{outcome.kind or 'error'} in {raiser}")
    if outcome.kind == "TypeError" and ("unexpected keyword" in message or "positional argument" in message):
        return Triage("d", f"signature differs: {_normalise(message)[:100]}")
    return Triage("e", f"{outcome.kind or 'error'} at {where}: {_normalise(message)[:80]}")


def final_category(item_category: str | None, triage: Triage) -> str:
    """A behaviour item's category, unless the failure itself shows a private access (a connector, a ``_``-name).

    Items group failures by the behaviour a test is about; a test that fails on Lightning's internals fails for
    that reason whatever its item says, so the evidence outranks the label.
    """
    if item_category is None or triage.category == "a":
        return triage.category
    return item_category


def _normalise(message: str) -> str:
    message = re.sub(r"0x[0-9a-f]+", "0x…", message)
    message = re.sub(r"/tmp/\S+", "/tmp/…", message)
    return message
