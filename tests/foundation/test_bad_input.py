"""Every kind of bad input gets a MisconfigurationException that names the value."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelplug import MisconfigurationException, Trainer
from accelplug.accelerators import CPUAccelerator
from accelplug.errors import AcceleratorUnavailableError

# (keyword arguments for Trainer, text the message must contain)
BAD_INPUTS: list[tuple[dict[str, Any], str]] = [
    ({"devices": 0}, "devices=0"),
    ({"devices": -2}, "devices=-2"),
    ({"devices": -100}, "devices=-100"),
    ({"devices": "0"}, "devices='0'"),
    ({"devices": "abc"}, "devices='abc'"),
    ({"devices": ""}, "devices=''"),
    ({"devices": "1.5"}, "devices='1.5'"),
    ({"devices": "0,0"}, "devices='0,0'"),
    ({"devices": "0,x"}, "devices='0,x'"),
    ({"devices": "-1,0"}, "devices='-1,0'"),
    ({"devices": [0, 0]}, "devices=[0, 0]"),
    ({"devices": []}, "devices=[]"),
    ({"devices": [-1]}, "devices=[-1]"),
    ({"devices": [0, 99]}, "devices=[0, 99]"),
    ({"devices": ["0"]}, "devices=['0']"),
    ({"devices": [True]}, "devices=[True]"),
    ({"devices": 1.0}, "devices=1.0"),
    ({"devices": True}, "devices=True"),
    ({"devices": None}, "devices=None"),
    ({"devices": {0: 1}}, "devices={0: 1}"),
    ({"accelerator": "mpss"}, "accelerator='mpss'"),
    ({"accelerator": "cdua"}, "accelerator='cdua'"),
    ({"accelerator": ""}, "accelerator=''"),
    ({"accelerator": 3}, "accelerator=3"),
    ({"accelerator": None}, "accelerator=None"),
    ({"accelerator": "mps"}, "accelerator='mps'"),
    ({"accelerator": "cuda"}, "accelerator='cuda'"),
    ({"accelerator": "gpu"}, "accelerator='gpu'"),
    ({"accelerator": int}, "accelerator=<class 'int'>"),
    ({"strategy": "dpp"}, "strategy='dpp'"),
    ({"strategy": "fsdpp"}, "strategy='fsdpp'"),
    ({"strategy": 1}, "strategy=1"),
    ({"strategy": "single_device", "devices": 2}, "strategy='single_device'"),
    ({"precision": "bf15"}, "precision='bf15'"),
    ({"precision": 8}, "precision=8"),
    ({"precision": "8-true"}, "precision='8-true'"),
    ({"precision": 32.0}, "precision=32.0"),
    ({"precision": True}, "precision=True"),
]


@pytest.mark.parametrize(("kwargs", "named"), BAD_INPUTS, ids=[repr(k) for k, _ in BAD_INPUTS])
def test_bad_input_raises_misconfiguration_naming_the_value(kwargs: dict[str, Any], named: str) -> None:
    with pytest.raises(MisconfigurationException) as info:
        Trainer(**kwargs)
    assert named in str(info.value)


def test_the_table_covers_at_least_thirty_cases() -> None:
    assert len(BAD_INPUTS) >= 30


@pytest.mark.parametrize("name", ["mps", "cuda"])
def test_unavailable_accelerators_raise_the_specific_subclass(name: str) -> None:
    with pytest.raises(AcceleratorUnavailableError) as info:
        Trainer(accelerator=name)
    assert info.value.accelerator == name
    assert info.value.reason
    assert "Accelerators available here: 'cpu'" in str(info.value)


def test_devices_messages_list_the_accepted_forms() -> None:
    with pytest.raises(MisconfigurationException, match=r'Accepted forms: "auto".*"0,2"'):
        Trainer(devices="zero")


def test_accelerator_typos_get_a_suggestion() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'cuda'"):
        Trainer(accelerator="cdua")


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.binary(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(_ANY)
def test_devices_parsing_raises_nothing_but_misconfiguration(devices: object) -> None:
    try:
        CPUAccelerator.parse_devices(devices)
    except MisconfigurationException:
        pass


@settings(max_examples=150, deadline=None)
@given(_ANY | st.sampled_from(["0,1", "1,", "-1", "auto", " 2 ", "0,,1", "99"]))
def test_trainer_devices_raise_nothing_but_misconfiguration(devices: object) -> None:
    try:
        Trainer(accelerator="cpu", devices=devices)  # type: ignore[arg-type]
    except MisconfigurationException:
        pass


@pytest.mark.parametrize("devices", [10**6, 2**63, "5000"])
def test_a_cpu_process_count_far_beyond_the_machine_is_refused_not_built(devices: object) -> None:
    """CPU devices are processes and may exceed the cores (as Lightning), but a count such as 10**6 is a typo: it
    is refused at once, where building the list of devices would exhaust memory."""
    with pytest.raises(MisconfigurationException, match="at most 1024 are started"):
        Trainer(accelerator="cpu", devices=devices)  # type: ignore[arg-type]
    assert len(CPUAccelerator.parse_devices(1024)) == 1024
