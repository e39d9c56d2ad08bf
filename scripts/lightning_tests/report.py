"""The report of ``run.py report``: the per-file table (markdown, under docs/) and every failure (JSON).

"before" is Lightning itself, "after" is accelplug through the redirect (placeholder mode, and the plain
redirect where that run exists). The slice's measure is the set of tests that pass under Lightning: how many of
them pass on accelplug, and, for the others, the first error line and a first sorting into issue 29's
categories (``classify.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

from classify import CATEGORIES, classify, final_category, test_source
from common import LIGHTNING_TAG
from outcomes import OUTCOMES, Outcome, read, with_collection_errors
from run import named_set
from triage import evidence, matches
from triage_items import ITEMS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _counts(outcomes: list[Outcome]) -> Counter[str]:
    return Counter(o.outcome for o in outcomes)


def _cell(counts: Counter[str]) -> str:
    return " / ".join(str(counts.get(name, 0)) for name in OUTCOMES)


def _local(text: str, tests_dir: Path) -> str:
    """A message without this machine's folders (the checkout's and the tests')."""
    return text.replace(f"{REPO}/", "").replace(f"{tests_dir}/", "")


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h"], capture_output=True, text=True)
    return done.stdout.strip()


def _table(
    files: list[str],
    before: dict[str, Outcome],
    after: dict[str, Outcome],
    plain: dict[str, Outcome] | None,
) -> list[str]:
    header = (
        "| file | before: Lightning (passed / failed / errors / skipped) | after: accelplug "
        "| Lightning-passing tests passing on accelplug |"
    )
    rule = "|---|---|---|---|"
    if plain is not None:
        header += " same, plain redirect |"
        rule += "---|"
    lines = [header, rule]
    total_before: Counter[str] = Counter()
    total_after: Counter[str] = Counter()
    kept = [0, 0, 0]
    for file in files:
        ids = [i for i in before if i.split("::")[0] == file]
        passing = [i for i in ids if before[i].outcome == "passed"]
        b = _counts([before[i] for i in ids])
        a = _counts([after[i] for i in ids if i in after])
        good = sum(1 for i in passing if i in after and after[i].outcome == "passed")
        total_before += b
        total_after += a
        kept[0] += good
        kept[1] += len(passing)
        row = f"| `{file}` | {_cell(b)} | {_cell(a)} | {good} / {len(passing)} |"
        if plain is not None:
            good_plain = sum(1 for i in passing if i in plain and plain[i].outcome == "passed")
            kept[2] += good_plain
            row += f" {good_plain} / {len(passing)} |"
        lines.append(row)
    total = f"| **all {len(files)} files** | {_cell(total_before)} | {_cell(total_after)} | **{kept[0]} / {kept[1]}** |"
    if plain is not None:
        total += f" {kept[2]} / {kept[1]} |"
    lines.append(total)
    return lines


#: Sections of the page written by hand from other measurements (named there), kept when the page is rewritten.
KEPT_SECTIONS = ("## Plain redirect: what still does not import",)


def _kept_sections(markdown: Path) -> list[str]:
    """The hand-written sections of the page as it stands, each to the next heading of its level."""
    if not markdown.exists():
        return []
    lines, kept = markdown.read_text(encoding="utf-8").splitlines(), []
    for heading in KEPT_SECTIONS:
        if heading in lines:
            start = lines.index(heading)
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
            kept += [*lines[start:end], ""] if lines[end - 1] else lines[start:end]
    return kept


def write_report(args: argparse.Namespace) -> int:
    tests_dir = args.cache / "tests"
    sections = []
    failures = []
    substitutions: dict[str, set[str]] = {}
    category_totals: dict[str, Counter[str]] = {}
    for set_name in ("slice", "rest"):
        files = named_set(tests_dir, [set_name])
        before, _ = read(args.out / "lightning-lightning" / "results.jsonl")
        before = {i: o for i, o in before.items() if o.file in files}
        if not before:
            continue
        tests, collect = read(args.out / "accelplug-placeholders" / "results.jsonl")
        after = with_collection_errors({i: o for i, o in tests.items() if o.file in files}, collect, before)
        plain_path = args.out / "accelplug-plain" / "results.jsonl"
        plain = None
        if plain_path.exists():
            ptests, pcollect = read(plain_path)
            ran = {o.file for o in ptests.values()} | set(pcollect)
            if set(f for f in files if any(i.split("::")[0] == f for i in before)) <= ran:
                plain = with_collection_errors({i: o for i, o in ptests.items() if o.file in files}, pcollect, before)
        files_run = [f for f in files if any(i.split("::")[0] == f for i in before)]
        sections.append((set_name, _table(files_run, before, after, plain)))
        categories: Counter[str] = Counter()
        for nodeid, outcome in sorted(before.items()):
            if outcome.outcome != "passed":
                continue
            got = after[nodeid]
            if got.outcome == "passed":
                continue
            item = next((it for it in ITEMS if matches(it, nodeid, evidence(got))), None)
            triage = classify(got, test_source(tests_dir, nodeid))
            category = final_category(item.category if item is not None else None, triage)
            categories[category] += 1
            failures.append(
                {
                    "set": set_name,
                    "id": nodeid,
                    "outcome": got.outcome,
                    "phase": got.when,
                    "first_error": _local(got.message, tests_dir)[:300],
                    "category": category,
                    "behaviour": item.title if item is not None else None,
                }
            )
            if item is None:  # the classifier's grouping key, for a failure no behaviour item names yet
                failures[-1]["classifier_key"] = re.sub(r"\(/[^)]*\)?", "(…)", _local(triage.key, tests_dir))
        category_totals[set_name] = categories
    subs_path = args.out / "accelplug-placeholders" / "substitutions.jsonl"
    if subs_path.exists():
        for line in subs_path.read_text().splitlines():
            row = json.loads(line)
            if row["kind"] != "module":
                substitutions.setdefault(f"{row['kind']}: {row['name']}", set()).add(row["file"])

    doc = [
        "# Lightning's own test suite on accelplug",
        "",
        f"Lightning's `tests_pytorch` and `tests_fabric` at tag `{LIGHTNING_TAG}` run twice, file by file: *before* on",
        "Lightning itself (the installed 2.6.6), *after* on accelplug through `accelplug.interop` (`import lightning`",
        "imports accelplug), in the tool's placeholder mode: a name accelplug lacks is taken from the nearest package",
        "that has it, or fails only where a test uses it; Lightning's `demos/boring_classes.py` (BoringModel) is",
        "executed on accelplug where accelplug lacks it; the test harness's private helpers have stand-ins.",
        "The plain redirect's column (no placeholders) shows what imports as it is.",
        "",
        "Measured at accelplug "
        f"`{_commit()}` by `scripts/lightning_tests/run.py` (see its docstring); the failing tests, each with its",
        "first error line, its category and the behaviour item it belongs to (`run.py triage` writes the sorted",
        "list), are in [lightning-test-suite-failures.json](lightning-test-suite-failures.json).",
        "",
        "How to run it:",
        "",
        "```bash",
        "python scripts/lightning_tests/run.py materialize       # git archive of the tag into the cache folder",
        "python scripts/lightning_tests/run.py run lightning slice rest",
        "python scripts/lightning_tests/run.py run accelplug slice rest",
        "python scripts/lightning_tests/run.py run accelplug slice --mode plain",
        "python scripts/lightning_tests/run.py report",
        "```",
        "",
    ]
    titles = {
        "slice": "## The slice (issue 29)",
        "rest": "## The rest of the CPU suite",
    }
    for set_name, table in sections:
        doc += [titles[set_name], ""]
        categories = category_totals.get(set_name, Counter())
        if categories:
            doc.append(
                "Lightning-passing tests that do not pass on accelplug, by category (the behaviour items of "
                "`scripts/lightning_tests/triage_items.py`; the classifier's guess for tests no item names yet):"
            )
            doc.append("")
            for letter, text in CATEGORIES.items():
                doc.append(f"- ({letter}) {text}: {categories.get(letter, 0)}")
            doc.append("")
        doc += [*table, ""]
    _, plain_collect = read(args.out / "accelplug-plain" / "results.jsonl")
    if plain_collect:
        by_error: dict[str, list[str]] = {}
        for file, failure in sorted(plain_collect.items()):
            by_error.setdefault(failure.message, []).append(file)
        doc += [
            "## Why test files do not import under the plain redirect",
            "",
            f"{len(plain_collect)} test files fail to import when Lightning's names are only redirected (no "
            "placeholders), for these reasons (a file counts under the first import that fails):",
            "",
        ]
        for message, files in sorted(by_error.items(), key=lambda kv: -len(kv[1])):
            doc.append(f"- {len(files)} files: `{_local(message, tests_dir)}`")
        doc.append("")
    if substitutions:
        doc += ["## What placeholder mode filled in", "", "| kind: name | files importing it |", "|---|---|"]
        doc += [f"| `{name}` | {len(users)} |" for name, users in sorted(substitutions.items())]
        doc.append("")
    doc += _kept_sections(args.markdown)
    args.markdown.write_text("\n".join(doc), encoding="utf-8")
    # one failing test per line: small, and a re-run's diff shows which tests changed
    lines = [json.dumps(failure, ensure_ascii=False) for failure in failures]
    header = json.dumps({"lightning_tag": LIGHTNING_TAG, "accelplug_commit": _commit()})[:-1]
    args.json.write_text(header + ', "failures": [\n' + ",\n".join(lines) + "\n]}\n", encoding="utf-8")
    print(f"wrote {args.markdown} and {args.json} ({len(failures)} failing tests)")
    return 0
