"""``docs/architecture.md`` matches the house: its layer and tier lists are the layering test's tables, and its
rooms tables name every file and folder of ``src/accelplug`` and of ``trainer/``, and nothing else.

A room added without a row, a row left behind by a move, or a layer changed in the test but not on the page
fails here, naming what differs.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = REPO / "src" / "accelplug"


def _layering() -> ModuleType:
    path = REPO / "tests" / "foundation" / "test_layering.py"
    spec = importlib.util.spec_from_file_location("layering_tables", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("layering_tables", module)
    spec.loader.exec_module(module)
    return module


layering = _layering()


def text_blocks(page: str) -> list[str]:
    return [block.rstrip("\n") for block in re.findall(r"```text\n(.*?)```", page, re.S)]


def table_after(heading: str, page: str) -> list[list[str]]:
    """The first column's code spans, row by row, of the first table after ``heading``."""
    section = page.split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first = line.split("|")[1]
            rows.append(re.findall(r"`([^`]+)`", first))
        elif rows and not line.startswith("|"):
            break
    return rows[1:]  # the header row


def entries(folder: Path) -> set[str]:
    """A folder's modules (``name.py``) and packages (``name/``), as the tables write them."""
    found = {p.name for p in folder.glob("*.py")}
    found |= {f"{p.name}/" for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    return found


def _named(rows: list[list[str]]) -> list[str]:
    return [name for row in rows for name in row]


def test_the_layer_list_is_the_layering_tests_table() -> None:
    assert layering.layer_list() in text_blocks(PAGE), (
        "docs/architecture.md's layer list differs from LAYERS; paste this block:\n" + layering.layer_list()
    )


def test_the_trainer_tiers_are_the_layering_tests_table() -> None:
    assert layering.tier_list() in text_blocks(PAGE), (
        "docs/architecture.md's tier list differs from TIERS; paste this block:\n" + layering.tier_list()
    )


def test_the_rooms_table_names_every_room_once_and_nothing_else() -> None:
    named = _named(table_after("## The rooms", PAGE))
    assert sorted(n for n in set(named) if named.count(n) > 1) == []
    tree = entries(PACKAGE)
    assert {"missing from the table": sorted(tree - set(named)), "not in the tree": sorted(set(named) - tree)} == {
        "missing from the table": [],
        "not in the tree": [],
    }


def test_the_trainer_table_names_every_module_and_folder_of_trainer() -> None:
    named = _named(table_after("## `trainer/`", PAGE))
    tree = entries(PACKAGE / "trainer")
    assert {"missing from the table": sorted(tree - set(named)), "not in the tree": sorted(set(named) - tree)} == {
        "missing from the table": [],
        "not in the tree": [],
    }


def test_the_table_reader_takes_the_first_column_of_the_first_table_only() -> None:
    page = "## The rooms\n\ntext\n\n| room | what |\n|---|---|\n| `a.py`, `b/` | holds `c` |\n\n| `d.py` | x |\n"
    assert table_after("## The rooms", page) == [["a.py", "b/"]]
