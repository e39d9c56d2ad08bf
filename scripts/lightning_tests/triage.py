"""The triage: every Lightning-passing test that fails on accelplug, sorted into behaviours (``triage_items.py``).

    python scripts/lightning_tests/run.py triage [--markdown PATH]   # default: <cache>/lightning-triage.md

Each behaviour item names the Lightning tests it covers (node ids or ``file::function`` prefixes), what
Lightning does, what accelplug does, and the accelplug source responsible. A failing test is counted under the
first item that names it; one no item names is listed at the end with the classifier's first guess, so a new
failure shows up instead of hiding. Rerun after a fix: an item whose tests all pass drops out, its count says
how many tests it still breaks.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

from classify import CATEGORIES, classify, final_category, test_source
from outcomes import Outcome, read, with_collection_errors
from run import named_set
from triage_items import AREAS, ITEMS, Item

REPO = Path(__file__).resolve().parents[2]


def evidence(outcome: Outcome) -> str:
    """What an item's ``messages`` are looked for in: the error's lines and the traceback's file:line."""
    locations = [f"{path}:{line}" for path, line, _ in outcome.traceback]
    return " ".join([outcome.message, *outcome.detail, *locations])


def matches(item: Item, nodeid: str, message: str = "") -> bool:
    """Whether ``item`` names the test ``nodeid`` (a node id, a ``file::function`` prefix or a ``*`` pattern)."""
    if message and any(text in message for text in item.messages):
        return True
    for pattern in item.tests:
        if "*" in pattern:  # a glob; brackets are the ids' own, not character classes
            if fnmatch.fnmatchcase(nodeid, pattern.replace("[", "[[]")):
                return True
        elif nodeid == pattern or nodeid.startswith(pattern + "[") or nodeid.startswith(pattern + "::"):
            return True
    return False


def failing_tests(args: argparse.Namespace) -> list[tuple[str, str, Outcome]]:
    """``(set, nodeid, outcome on accelplug)`` for each test that passes on Lightning and not on accelplug."""
    tests_dir = args.cache / "tests"
    before_all, _ = read(args.out / "lightning-lightning" / "results.jsonl")
    after_all, collect = read(args.out / "accelplug-placeholders" / "results.jsonl")
    found = []
    for set_name in ("slice", "rest"):
        files = set(named_set(tests_dir, [set_name]))
        before = {i: o for i, o in before_all.items() if o.file in files}
        after = with_collection_errors({i: o for i, o in after_all.items() if o.file in files}, collect, before)
        for nodeid, outcome in before.items():
            if outcome.outcome == "passed" and after[nodeid].outcome != "passed":
                found.append((set_name, nodeid, after[nodeid]))
    return found


def _compress(ids: list[str]) -> str:
    """``file::test[a], file::test[b]`` -> ``file::test [2 cases]``, grouped by file."""
    by_function: dict[str, int] = Counter(i.split("[")[0] for i in ids)
    by_file: dict[str, list[str]] = defaultdict(list)
    for function, count in by_function.items():
        file, _, name = function.partition("::")
        by_file[file].append(name + (f" ×{count}" if count > 1 else ""))
    return "; ".join(f"`{file}`: " + ", ".join(sorted(names)) for file, names in sorted(by_file.items()))


def _base() -> str:
    """The commit of ``main`` this checkout's accelplug sources come from (they are measured, not changed, here)."""
    done = subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()[:7] or "HEAD"


def write_triage(args: argparse.Namespace) -> int:
    failures = failing_tests(args)
    assigned: dict[int, list[tuple[str, str]]] = defaultdict(list)
    unsorted: list[tuple[str, str, Outcome]] = []
    tests_dir = args.cache / "tests"
    for set_name, nodeid, outcome in failures:
        index = next((n for n, item in enumerate(ITEMS) if matches(item, nodeid, evidence(outcome))), None)
        triaged = classify(outcome, test_source(tests_dir, nodeid))
        if index is not None and final_category(ITEMS[index].category, triaged) != ITEMS[index].category:
            index = None  # the failure's evidence of a private access outranks the item's label
        if index is None:
            unsorted.append((set_name, nodeid, outcome))
        else:
            assigned[index].append((set_name, nodeid))
    counts_by_category: dict[str, Counter[str]] = defaultdict(Counter)
    for index, tests in assigned.items():
        for set_name, _ in tests:
            counts_by_category[set_name][ITEMS[index].category] += 1
    for set_name, nodeid, outcome in unsorted:
        counts_by_category[set_name][classify(outcome, test_source(tests_dir, nodeid)).category] += 1

    lines = [
        "# Lightning's own tests on accelplug: the behaviours that differ",
        "",
        "Generated by `python scripts/lightning_tests/run.py triage` from the runs of `scripts/lightning_tests/run.py`",
        "(Lightning 2.6.5's tests; before = Lightning 2.6.6, after = accelplug through `accelplug.interop`,",
        "placeholder mode) and the behaviour items of `scripts/lightning_tests/triage_items.py`. Each item: the",
        "behaviour Lightning's tests expect, what accelplug does, the accelplug source responsible, and the Lightning",
        "tests it breaks (counted once, under the first item that names them). Source locations are paths under",
        f"`src/accelplug/` as of `{_base()}` (the house moves may rename them). Categories: "
        + "; ".join(f"({k}) {v}" for k, v in CATEGORIES.items())
        + ".",
        "",
        "## Counts",
        "",
        "| set | " + " | ".join(f"({k})" for k in CATEGORIES) + " | all |",
        "|---|" + "---|" * (len(CATEGORIES) + 1),
    ]
    for set_name in ("slice", "rest"):
        row = counts_by_category.get(set_name, Counter())
        lines.append(
            f"| {set_name} | " + " | ".join(str(row.get(k, 0)) for k in CATEGORIES) + f" | {sum(row.values())} |"
        )
    ranked = sorted(
        ((len(tests), index) for index, tests in assigned.items() if ITEMS[index].category != "a"), reverse=True
    )
    lines += ["", "## The public-behaviour gaps by tests affected", ""]
    lines += ["| tests | item | category | area |", "|---|---|---|---|"]
    for count, index in ranked:
        item = ITEMS[index]
        lines.append(f"| {count} | {item.title} | ({item.category}) | {AREAS[item.area]} |")
    for area, area_title in AREAS.items():
        entries = [(len(assigned[n]), n) for n, item in enumerate(ITEMS) if item.area == area and assigned.get(n)]
        if not entries:
            continue
        lines += ["", f"## {area_title}", ""]
        for count, index in sorted(entries, key=lambda e: (ITEMS[e[1]].category == "a", -e[0])):
            item = ITEMS[index]
            tests = assigned[index]
            in_slice = sum(1 for s, _ in tests if s == "slice")
            lines += [
                f"### {item.title}",
                "",
                f"({item.category}) {CATEGORIES[item.category]}: **{count} tests** ({in_slice} in the slice).",
                "",
                f"- Lightning: {item.lightning}",
                f"- accelplug: {item.accelplug}",
                f"- Where: {item.where}",
                f"- Tests: {_compress([nodeid for _, nodeid in tests])}",
                "",
            ]
    private: dict[str, list[str]] = defaultdict(list)
    rest: list[tuple[str, str, Outcome, str]] = []
    for set_name, nodeid, outcome in unsorted:
        triage = classify(outcome, test_source(tests_dir, nodeid))
        if triage.category == "a":
            private[triage.key].append(nodeid)
        else:
            rest.append((set_name, nodeid, outcome, triage.category))
    if private:
        lines += [
            "",
            "## Lightning's private internals, sorted by the classifier",
            "",
            "(a) Tests that patch, read or call Lightning's private machinery (connectors, loop objects, `_`-names, "
            "launchers); not a target. Grouped by what they reach for:",
            "",
        ]
        for key, ids in sorted(private.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"- {len(ids)} × {key}: {_compress(ids)}")
    if rest:
        lines += ["", "## Not yet sorted into an item", ""]
        for set_name, nodeid, outcome, category in rest:
            lines.append(f"- ({category}) `{nodeid}` [{set_name}]: {outcome.message[:200]}")
    args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = len(failures)
    print(
        f"wrote {args.markdown}: {total} failing tests, {total - len(unsorted)} in {len(assigned)} items, "
        f"{sum(map(len, private.values()))} private by the classifier, {len(rest)} not sorted"
    )
    return 0
