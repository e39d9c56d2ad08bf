"""The registry's entry-point scan finds what ``importlib.metadata.entry_points(group="accelplug")`` finds.

It skips the ``entry_points.txt`` files that cannot hold the group unparsed (start-up, issue 28), so these
tests hold it to the stdlib's answer on real ``.dist-info`` folders put on ``sys.path``: a plugin is found,
another group of the same word is not, and an earlier copy of a distribution hides a later one.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from pathlib import Path

import pytest

from accelplug.registry import _plugin_entry_points


def _dist(folder: Path, name: str, entry_points: str | None) -> Path:
    """A minimal installed distribution: ``METADATA``, and ``entry_points.txt`` when given."""
    info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return folder


def _on_path(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    for folder in reversed(folders):
        monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()


def _stdlib() -> list[tuple[str, str]]:
    return sorted((ep.name, ep.value) for ep in metadata.entry_points(group="accelplug"))


def _ours() -> list[tuple[str, str]]:
    return sorted((ep.name, ep.value) for ep in _plugin_entry_points())


def test_a_plugin_entry_point_is_found_with_its_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(monkeypatch, _dist(tmp_path, "accelplug-demo", "[accelplug]\ndemo = demo_plugin\n"))
    found = _plugin_entry_points()
    assert [(ep.name, ep.value) for ep in found] == [("demo", "demo_plugin")] == _stdlib()
    assert found[0].dist is not None and found[0].dist.name == "accelplug-demo"


def test_another_group_that_mentions_accelplug_is_not_a_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(monkeypatch, _dist(tmp_path, "accelplug-tools", "[console_scripts]\naccelplug-tools = tools:main\n"))
    assert _ours() == _stdlib() == []


def test_an_earlier_copy_of_a_distribution_hides_a_later_ones_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _dist(tmp_path / "first", "accelplug-demo", None)
    second = _dist(tmp_path / "second", "accelplug-demo", "[accelplug]\ndemo = demo_plugin\n")
    _on_path(monkeypatch, first, second)
    assert _ours() == _stdlib() == []
