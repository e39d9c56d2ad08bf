"""Every public parser, fed anything: nothing but ``MisconfigurationException`` escapes, and the three
readers of a ``devices`` value (selection, the config file, ``accelplug launch``) always agree.

The strategies lean on what broke before: Unicode digits (``"²"``, ``"٣"``, ``"߁"``) for which
``str.isdigit()`` is true while ``int()`` refuses them or reads a number nobody typed.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelplug import MisconfigurationException, Trainer, select
from accelplug.accelerators import CPUAccelerator
from accelplug.config import validate_values
from accelplug.envvars import env_choice, env_flag, env_float, env_int, env_names, env_str
from accelplug.hardware.cuda_visible import resolve_visible_devices
from accelplug.hardware.devices import DevicesRequest, devices_from_text, parse_devices, tokenize_devices

#: Digits that are not ASCII: superscripts, Arabic-Indic, N'Ko, full-width, circled.
UNICODE_DIGITS = st.characters(categories=["Nd", "No"]).filter(lambda c: not c.isascii())
DEVICE_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from("0123456789,-+ aotu"), UNICODE_DIGITS, st.characters()), max_size=8
)
ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | DEVICE_TEXT | st.binary(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(DEVICE_TEXT, inner, max_size=2)
    ),
    max_leaves=6,
)


@pytest.mark.parametrize("devices", ["²", "1,²", "٣", "٣,1", "¹⁰", "２", "߁", "-²", "²,"])
def test_unicode_digits_are_refused_cleanly_everywhere(devices: str) -> None:
    for parse in (tokenize_devices, CPUAccelerator.parse_devices, lambda d: Trainer(devices=d)):
        with pytest.raises(MisconfigurationException, match=f"devices={devices!r}"):
            parse(devices)
    with pytest.raises(MisconfigurationException, match="devices="):
        validate_values({"devices": devices})


@settings(max_examples=500, deadline=None)
@given(ANY_VALUE)
def test_the_tokenizer_raises_nothing_but_misconfiguration(devices: object) -> None:
    try:
        request = tokenize_devices(devices)
    except MisconfigurationException:
        return
    assert isinstance(request, DevicesRequest)
    assert tokenize_devices(request.as_text()) == request  # the canonical text reads back the same


@settings(max_examples=500, deadline=None)
@given(ANY_VALUE, st.integers(min_value=0, max_value=16), st.none() | st.integers(min_value=-2, max_value=4))
def test_parse_devices_returns_distinct_existing_indices_or_misconfiguration(
    devices: object, count: int, auto: int | None
) -> None:
    try:
        indices = parse_devices(devices, count, "anything", auto)
    except MisconfigurationException:
        return
    assert indices and len(set(indices)) == len(indices) and all(0 <= i < count for i in indices)


@settings(max_examples=300, deadline=None)
@given(DEVICE_TEXT | st.integers(min_value=-3, max_value=20))
def test_selection_the_config_file_and_launch_read_devices_alike(devices: str | int) -> None:
    try:
        token = tokenize_devices(devices)
    except MisconfigurationException:
        token = None
    try:
        stored = validate_values({"devices": devices})["devices"]
    except MisconfigurationException:
        stored = None
    assert stored == (token.as_text() if token else None)


@settings(max_examples=300, deadline=None)
@given(DEVICE_TEXT)
def test_launch_reads_devices_text_as_the_tokenizer_does(text: str) -> None:
    try:
        expected = tokenize_devices(text)
    except MisconfigurationException:
        with pytest.raises(MisconfigurationException):
            devices_from_text(text)
        return
    assert tokenize_devices(devices_from_text(text)) == expected


@settings(max_examples=200, deadline=None)
@given(ANY_VALUE, st.one_of(st.integers(), DEVICE_TEXT, st.none(), st.floats(), st.booleans()))
def test_select_raises_nothing_but_misconfiguration(devices: object, precision: object) -> None:
    try:
        selection = select("cpu", devices=devices, precision=precision)  # type: ignore[arg-type]
    except MisconfigurationException:
        return
    assert selection.num_devices >= 1


ENV_TEXT = st.text(alphabet=st.one_of(st.characters(), UNICODE_DIGITS, st.sampled_from("01.-+eE ninfa")), max_size=10)


@settings(max_examples=300, deadline=None)
@given(ENV_TEXT)
def test_the_env_readers_raise_nothing_but_misconfiguration(value: str) -> None:
    environ = {"ACCELPLUG_X": value}
    readers = [
        lambda: env_flag("ACCELPLUG_X", environ=environ),
        lambda: env_float("ACCELPLUG_X", 1.0, minimum=0.01, maximum=3600, environ=environ),
        lambda: env_int("ACCELPLUG_X", 1, minimum=0, environ=environ),
        lambda: env_choice("ACCELPLUG_X", ["cpu", "cuda"], "cpu", environ=environ),
        lambda: env_names("ACCELPLUG_X", environ=environ),
        lambda: env_str("ACCELPLUG_X", environ=environ),
    ]
    for read in readers:
        try:
            result = read()
        except MisconfigurationException as exc:
            message = str(exc)
            assert "ACCELPLUG_X=" in message
            continue
        if isinstance(result, float):
            assert math.isfinite(result) and 0.01 <= result <= 3600


@settings(max_examples=500, deadline=None)
@given(
    st.none() | st.text(alphabet=st.one_of(st.characters(), st.sampled_from("0123456789,+- GPUMIabcdef")), max_size=24),
    st.lists(st.from_regex(r"\AGPU-[0-9a-f]{4}\Z"), max_size=4, unique=True),
)
def test_cuda_visible_devices_resolves_to_distinct_existing_gpus(visible: str | None, uuids: list[str]) -> None:
    physical = resolve_visible_devices(visible, uuids).physical
    if physical is None:
        assert visible is not None and visible.startswith("MIG-")
        return
    assert len(set(physical)) == len(physical) and all(0 <= i < len(uuids) for i in physical)
