"""What ``seed_everything`` accepts, refuses and says, compared with Lightning 2.6's ``seed_everything``."""

from __future__ import annotations

import random
import warnings

import numpy
import pytest
import torch
from lightning.fabric.utilities.seed import seed_everything as lightning_seed_everything

from accelplug import seed_everything
from accelplug.errors import MisconfigurationException
from accelplug.seed import SEED_ENV


@pytest.fixture(autouse=True)
def _no_launcher_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK", SEED_ENV):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("given", [numpy.int64(42), torch.tensor(42), "42", " 42 ", 42.0])
def test_an_integer_in_another_type_is_that_seed_as_in_lightning(given: object) -> None:
    assert lightning_seed_everything(given, verbose=False) == 42  # type: ignore[arg-type]
    expected = random.random()
    assert seed_everything(given, verbose=False) == 42
    assert random.random() == expected


@pytest.mark.parametrize(("given", "shown"), [(3.5, "3.5"), ("forty", "'forty'"), (True, "True")])
def test_a_seed_that_is_no_integer_is_refused_naming_it(given: object, shown: str) -> None:
    with pytest.raises(ValueError, match=rf"seed_everything\(seed={shown}\): expected an integer seed") as info:
        seed_everything(given)
    assert isinstance(info.value, MisconfigurationException)


def test_a_seed_out_of_numpys_range_is_refused_in_lightnings_words() -> None:
    with pytest.raises(
        MisconfigurationException, match=r"^4294967296 is not in bounds, numpy accepts from 0 to 4294967295"
    ):
        seed_everything(2**32)


def test_no_seed_anywhere_warns_and_seeds_zero_as_lightning_does() -> None:
    with pytest.warns(UserWarning, match="^No seed found, seed set to 0$"):
        assert seed_everything() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seed_everything(verbose=False)  # verbose=False: Lightning says nothing either


def test_a_bad_seed_in_the_environment_is_named_in_lightnings_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_ENV, "abc")
    with pytest.raises(MisconfigurationException, match=r"^Invalid seed specified via PL_GLOBAL_SEED: 'abc'"):
        seed_everything()


@pytest.mark.parametrize(
    ("variables", "line"), [({}, "Seed set to 7"), ({"LOCAL_RANK": "1"}, "[rank: 1] Seed set to 7")]
)
def test_the_seed_line_names_the_rank_a_launcher_gave(
    variables: dict[str, str], line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    seed_everything(7)
    assert capsys.readouterr().err.splitlines() == [line]
