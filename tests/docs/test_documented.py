"""The documentation keeps up with the code: every public name, option, setting, hook, command and variable.

The names are read from the code at test time (``accelplug.__all__``, the Trainer's signature, the
config fields, the hook specs, the typer app, ``KNOWN_VARIABLES``), so a new option without a line
in the docs fails here, and the test id names it. A name counts as documented when it appears as
code (between backticks) or is rendered by an API reference directive (``::: module.name``).

The pages are also held to the look of the built site: no object rendered twice, and tables that
fit the content column of mkdocs-material's default layout (see :func:`_table_min_width_px`).
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

import pytest

import accelplug
from accelplug import hookspecs
from accelplug.cli.app import app
from accelplug.config import FIELDS
from accelplug.envvars import KNOWN_VARIABLES

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {path.relative_to(DOCS).as_posix(): path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md"))}
ALL_TEXT = "\n".join(PAGES.values())
DIRECTIVE = re.compile(r"^::: *([\w.]+)", re.M)
RENDERED = DIRECTIVE.findall(ALL_TEXT)


def _as_code(name: str, text: str) -> bool:
    """``name`` inside a code span or a code block line, or rendered by a ``:::`` directive."""
    word = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
    spans = re.findall(r"`([^`\n]+)`", text)
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    return any(re.search(word, chunk) for chunk in [*spans, *blocks]) or any(
        r == name or r.endswith(f".{name}") for r in RENDERED
    )


# ---- names from the code --------------------------------------------------------------------------
def _trainer_parameters() -> list[str]:
    parameters = inspect.signature(accelplug.Trainer.__init__).parameters.values()
    return [p.name for p in parameters if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def _hooks() -> list[str]:
    return [name for name, obj in vars(hookspecs).items() if getattr(obj, f"{hookspecs.PROJECT_NAME}_spec", None)]


def _commands() -> list[str]:
    commands = [info.name or "" for info in app.registered_commands]
    for group in app.registered_groups:
        commands.append(group.name or "")
        typer_instance = group.typer_instance
        assert typer_instance is not None
        commands += [f"{group.name} {info.name}" for info in typer_instance.registered_commands]
    return commands


@pytest.mark.parametrize("name", [n for n in accelplug.__all__ if n != "__version__"])
def test_every_public_name_is_documented(name: str) -> None:
    assert _as_code(name, ALL_TEXT), f"accelplug.{name} is public but no docs page mentions `{name}`"


@pytest.mark.parametrize("parameter", _trainer_parameters())
def test_every_trainer_option_is_in_the_trainer_page(parameter: str) -> None:
    assert _as_code(parameter, PAGES["trainer.md"]), (
        f"Trainer({parameter}=...) is not documented: add it to the options table of docs/trainer.md"
    )


@pytest.mark.parametrize("key", FIELDS)
def test_every_config_setting_is_in_the_configuration_page(key: str) -> None:
    assert _as_code(key, PAGES["configuration.md"]), f"config setting {key!r} is missing from docs/configuration.md"


@pytest.mark.parametrize("hook", _hooks())
def test_every_hook_has_its_section_in_the_hook_reference(hook: str) -> None:
    assert f"## `{hook}`" in PAGES["plugins/hooks.md"], f"hook {hook} has no section in docs/plugins/hooks.md"


@pytest.mark.parametrize("command", _commands())
def test_every_cli_command_is_on_the_command_line_page(command: str) -> None:
    assert f"accelplug {command}" in PAGES["cli.md"], f"`accelplug {command}` is missing from docs/cli.md"


@pytest.mark.parametrize("variable", sorted(KNOWN_VARIABLES))
def test_every_environment_variable_is_documented(variable: str) -> None:
    assert _as_code(variable, PAGES["configuration.md"]), (
        f"{variable} is read by accelplug but not listed in docs/configuration.md"
    )


def test_the_names_come_from_the_code() -> None:
    # Guards the collectors above: an empty list would make the parametrised tests vacuous.
    assert {"Trainer", "select", "get_registry"} <= set(accelplug.__all__)
    assert {"accelerator", "devices", "max_epochs"} <= set(_trainer_parameters())
    assert {"register_accelerators", "register_strategies"} <= set(_hooks())
    assert {"list", "env", "launch", "demo", "config", "config show"} <= set(_commands())


# ---- the built site's look ------------------------------------------------------------------------
def test_no_object_is_rendered_twice() -> None:
    twice = [name for name, count in Counter(RENDERED).items() if count > 1]
    assert not twice, f"rendered by more than one ::: directive: {twice}"


def test_every_page_is_in_the_navigation() -> None:
    nav = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page for page in PAGES if page not in nav] == []


#: mkdocs-material's content column with both sidebars (a screen >= 1220 px): 61rem grid - 2 x 12.1rem
#: sidebars - 2 x 1.2rem margins, at the theme's 20 px rem.
CONTENT_PX = 688
#: Table text is .64rem (12.8 px); 7 px covers an average character of bold Roboto at that size.
CHAR_PX = 7
#: A cell's horizontal padding (2 x 1.25em at 12.8 px), and a header cell's min-width (5rem).
CELL_PADDING_PX, TH_MIN_PX = 32, 100
#: A code block line: 13.6 px Roboto Mono (0.6em wide) in 688 px minus 2 x 16 px padding.
CODE_COLUMNS = 80


def _tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of a page (outside code blocks), as rows of cells."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    tables, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def _table_min_width_px(rows: list[list[str]]) -> int:
    """The narrowest a table can be: per column, its longest word that cannot wrap.

    Inline code wraps anywhere in mkdocs-material (``word-break: break-word``), so only plain words
    count; link targets are not shown, so only link texts count.
    """
    width = 0
    for column in zip(*rows, strict=False):
        words = [
            w
            for cell in column
            for w in re.sub(r"`[^`]*`", " ", re.sub(r"\]\([^)]*\)", "]", cell)).replace("\\|", "|").split()
        ]
        longest = max((len(w.strip("[]*")) for w in words), default=0)
        width += max(TH_MIN_PX, longest * CHAR_PX + CELL_PADDING_PX)
    return width


@pytest.mark.parametrize("page", sorted(PAGES))
def test_tables_fit_the_content_column(page: str) -> None:
    too_wide = [
        f"table starting {' | '.join(rows[0])!r}: at least {_table_min_width_px(rows)} px"
        for rows in _tables(PAGES[page])
        if _table_min_width_px(rows) > CONTENT_PX
    ]
    assert not too_wide, f"{page}: wider than the {CONTENT_PX} px content column: {too_wide}"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_terminal_tables_in_code_blocks_fit(page: str) -> None:
    blocks = re.findall(r"```[^\n]*\n(.*?)```", PAGES[page], re.S)
    wide = [line for block in blocks for line in block.splitlines() if re.search("[┃│┏┗╭╰━─]", line)]
    wide = [line for line in wide if len(line) > CODE_COLUMNS]
    assert not wide, f"{page}: terminal table lines wider than {CODE_COLUMNS} columns: {wide[:3]}"
