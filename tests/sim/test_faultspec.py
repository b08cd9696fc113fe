"""Fault specs: the grammar of --fault, inject and clear.

Covers: every example of the issue parses to the fault it names; bad specs are refused with a
message naming them; printing a fault gives a spec that parses back to it (property test);
clear selectors match exactly what they name; the fabric refuses unknown nodes and indexes.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim.gpu import fabric, faultspec, stages
from shared.sim.gpu.faultspec import Fault, Kind


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("node-007:nic=0.4", [Fault(Kind.NIC, "node-007", value=0.4)]),
        ("node-007:nic[3]=0.4", [Fault(Kind.NIC, "node-007", index=3, value=0.4)]),
        ("node-003:gpu-dead", [Fault(Kind.GPU_DEAD, "node-003")]),
        ("node-005:flaky=0.5", [Fault(Kind.FLAKY, "node-005", value=0.5)]),
        ("rack-0/rack-1:link=0.3", [Fault(Kind.LINK, racks=("rack-0", "rack-1"), value=0.3)]),
        ("node-002:xid=79", [Fault(Kind.XID, "node-002", value=79.0)]),
        ("node-004:thermal", [Fault(Kind.THERMAL, "node-004")]),
        ("node-006:stall", [Fault(Kind.STALL, "node-006")]),
        (
            "node-001:thermal[2],nic=0.5",
            [Fault(Kind.THERMAL, "node-001", index=2), Fault(Kind.NIC, "node-001", value=0.5)],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_the_issues_examples_parse_to_the_faults_they_name(spec: str, expected: list[Fault]) -> None:
    assert faultspec.parse(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("node-007", "expected TARGET:FAULT"),
        ("node-007:nic=1.5", "between 0 and 1"),
        ("node-007:nic", "nic needs a value"),
        ("node-007:gpu-dead=1", "gpu-dead takes no value"),
        ("node-007:flaky[2]=0.5", "flaky takes no \\[index\\]"),
        ("node-007:link=0.3", "link faults take RACK/RACK"),
        ("rack-0/rack-0:link=0.3", "two different racks"),
        ("node-007:xid=abc", "Xid code"),
        ("node-007:melt", "unknown fault 'melt'"),
        ("Node_7:thermal", "not a node name"),
    ],
    ids=lambda v: v,
)
def test_bad_specs_are_refused_naming_the_spec(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        faultspec.parse(spec)


_names = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)
_fraction = st.sampled_from([0.0, 0.05, 0.3, 0.4, 0.5, 0.999, 1.0])
_node_faults = st.one_of(
    st.builds(Fault, st.just(Kind.NIC), _names, index=st.none() | st.integers(0, 15), value=_fraction),
    st.builds(Fault, st.just(Kind.GPU_DEAD), _names, index=st.none() | st.integers(0, 7)),
    st.builds(Fault, st.just(Kind.FLAKY), _names, value=_fraction),
    st.builds(
        Fault, st.just(Kind.XID), _names, index=st.none() | st.integers(0, 7), value=st.integers(1, 999).map(float)
    ),
    st.builds(Fault, st.just(Kind.THERMAL), _names, index=st.none() | st.integers(0, 7)),
    st.builds(Fault, st.just(Kind.STALL), _names),
)
_links = st.builds(lambda a, b, v: Fault(Kind.LINK, racks=(a, b + "x"), value=v), _names, _names, _fraction)


@given(st.one_of(_node_faults, _links))
def test_a_printed_fault_parses_back_to_itself(fault: Fault) -> None:
    assert faultspec.parse(str(fault)) == [fault]


def test_clear_selectors_match_exactly_what_they_name() -> None:
    faults = fabric.parse_all(
        ["node-1:nic[3]=0.4", "node-1:nic=0.9", "node-1:thermal", "node-2:nic=0.4", "rack-0/rack-1:link=0.3"]
    )
    chosen = [
        [str(f) for f in faults if faultspec.parse_selector(s).matches(f)]
        for s in ("node-1", "node-1:nic", "node-1:nic[3]", "rack-1/rack-0:link")
    ]
    assert chosen == [
        ["node-1:nic[3]=0.4", "node-1:nic=0.9", "node-1:thermal"],
        ["node-1:nic[3]=0.4", "node-1:nic=0.9"],
        ["node-1:nic[3]=0.4"],
        ["rack-0/rack-1:link=0.3"],
    ]


def test_the_fabric_refuses_faults_on_what_it_does_not_have() -> None:
    model = fabric.Fabric(seed=1)
    model.add_nodes(["node-0", "node-1"], racks=2, profile=stages.profile("h100"))
    for spec, message in (
        ("node-9:thermal", "no GPU node"),
        ("node-0:nic[8]=0.1", "out of range"),
        ("rack-0/rack-5:link=0.5", "no rack 'rack-5'"),
    ):
        with pytest.raises(ValueError, match=message):
            model.inject(faultspec.parse(spec))
