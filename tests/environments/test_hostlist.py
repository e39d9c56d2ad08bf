"""Slurm host lists expand exactly as ``scontrol show hostnames`` expands them.

The expected lists below are what Slurm 22.05's ``scontrol show hostnames`` printed for each input;
``tests/clusters/test_slurm_environment.py`` compares the parser with scontrol itself on generated
lists.
"""

from __future__ import annotations

import time

import pytest

from accelplug.environments.hostlist import expand_hostlist, first_host, parse_hostlist
from accelplug.errors import MisconfigurationException

SCONTROL = {
    "vm": ["vm"],
    "n[8-12]": ["n8", "n9", "n10", "n11", "n12"],
    "n[08-12]": ["n08", "n09", "n10", "n11", "n12"],
    "n[9-011]": ["n9", "n10", "n11"],
    "n[009-11]": ["n009", "n010", "n011"],
    "n[099-100]": ["n099", "n100"],
    "n[01-2]": ["n01", "n02"],
    "n[0001-0003]": ["n0001", "n0002", "n0003"],
    "n[01,2,003]": ["n01", "n2", "n003"],
    "n[1,1-2]": ["n1", "n1", "n2"],
    "n[2-2]": ["n2"],
    "n[0-0]": ["n0"],
    "a,b,a": ["a", "b", "a"],
    "a b": ["a", "b"],
    "[1-2]": ["1", "2"],
    "n01[1-2]": ["n011", "n012"],
    "10.0.0.[1-2]": ["10.0.0.1", "10.0.0.2"],
    "n[1-2],m[3]": ["n1", "n2", "m3"],
    "n[1-3],,m": ["n1", "n2", "n3", "m"],
    "rack[1-2]-n[01-02]": ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"],
    "x[1-2]y[3-4]": ["x1y3", "x1y4", "x2y3", "x2y4"],
    "node[001-003,007]": ["node001", "node002", "node003", "node007"],
    "": [],
}

#: Inputs scontrol rejects ("Invalid hostlist"), with the reason this parser gives.
REJECTED = {
    "n[3-1]": "runs backwards",
    "n[1-10:2]": "neither a number nor a low-high range",
    "n[a-c]": "neither a number nor a low-high range",
    "n[]": "neither a number nor a low-high range",
    "n[1-2,]": "neither a number nor a low-high range",
    "n[,1]": "neither a number nor a low-high range",
    "n[-1]": "neither a number nor a low-high range",
    "n[1-2]-ib": "text after its last ']'",
    "x[1-2]y[3-4]z": "text after its last ']'",
    "n[1-2]]": "']' with no '['",
}

#: Inputs scontrol prints something odd for (``n[1-2`` gives ``n]``); refused here, since Slurm never writes them.
MALFORMED = {
    "n[1-2": "never closed",
    "n1]": "']' with no '['",
    "n[[1-2]": "nests brackets",
    "n[1-]": "neither a number nor a low-high range",
}


def test_whitespace_inside_brackets_is_read_past_as_in_lightning() -> None:
    """Lightning takes ``1.2.3.[089, 100-110]``'s first host as ``1.2.3.089``; so does accelplug."""
    assert first_host("1.2.3.[089, 100-110]") == "1.2.3.089"
    assert expand_hostlist("n[1 - 2]") == ["n1", "n2"]


@pytest.mark.parametrize(("text", "hosts"), SCONTROL.items())
def test_expands_as_scontrol_does(text: str, hosts: list[str]) -> None:
    assert expand_hostlist(text) == hosts
    assert len(parse_hostlist(text)) == len(hosts)
    assert first_host(text) == (hosts[0] if hosts else None)


@pytest.mark.parametrize(("text", "reason"), {**REJECTED, **MALFORMED}.items())
def test_a_malformed_list_is_refused_naming_the_variable_and_the_problem(text: str, reason: str) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        parse_hostlist(text, "SLURM_NODELIST")
    message = str(caught.value)
    assert message.startswith(f"SLURM_NODELIST={text!r} is not a Slurm host list: ")
    assert reason in message
    assert "node[001-003,007]" in message  # what is accepted


def test_the_first_host_of_a_huge_list_costs_nothing() -> None:
    begin = time.perf_counter()
    hosts = parse_hostlist("gpu[00000001-99999999],cpu[1-99999999]")
    assert hosts.first == "gpu00000001"
    assert len(hosts) == 2 * 99999999
    assert time.perf_counter() - begin < 0.1


def test_a_non_text_value_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="expected text"):
        parse_hostlist(3, "SLURM_NODELIST")  # type: ignore[arg-type]
