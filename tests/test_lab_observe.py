"""The pieces of the lab's reads that need no lab: the echo packets the in-process ping sends and
recognises, and the split of several vtysh JSON outputs printed one after another."""

from __future__ import annotations

import json
import struct

from cluster.lab.observe import _checksum, echo_reply, echo_request, platform_names
from cluster.lab.runtime import split_json
from cluster.verify.parsers import parse_lldpctl_json


def test_an_echo_request_carries_its_id_sequence_size_and_a_valid_checksum() -> None:
    packet = echo_request(0x1234, 7, 8972)  # a 9000-byte IP packet: 20 + 8 + 8972
    assert len(packet) == 8 + 8972
    kind, code, _, identifier, sequence = struct.unpack("!BBHHH", packet[:8])
    assert (kind, code, identifier, sequence) == (8, 0, 0x1234, 7)
    assert _checksum(packet) == 0  # the checksum over a packet that carries it sums to zero (RFC 1071)


def test_only_an_echo_reply_is_recognised_with_its_id_and_sequence() -> None:
    ip_header = bytes([0x45]) + bytes(19)
    reply = ip_header + struct.pack("!BBHHH", 0, 0, 0, 0x1234, 7) + bytes(56)
    request = ip_header + struct.pack("!BBHHH", 8, 0, 0, 0x1234, 7) + bytes(56)
    assert echo_reply(reply) == (0x1234, 7)
    assert echo_reply(request) is None and echo_reply(b"\x45") is None
    with_options = bytes([0x46]) + bytes(23) + struct.pack("!BBHHH", 0, 0, 0, 1, 2)
    assert echo_reply(with_options) == (1, 2)


def test_outputs_printed_one_after_another_split_into_each_value() -> None:
    assert split_json('{\n"a": {"b": [1]}\n}\n[\n{"peer": "10.0.0.1"}\n]\n') == ['{\n"a": {"b": [1]}\n}',
                                                                                 '[\n{"peer": "10.0.0.1"}\n]']
    assert split_json("") == []
    assert split_json("{} % bfdd is not running") is None


def test_lldp_reports_each_local_port_as_the_switch_os_names_it() -> None:
    """A lab port whose EOS name Linux cannot carry (netdev Ethernet7_1) is reported as Ethernet7/1,
    as the switch itself reports it; lldpctl writes one interface as an object, several as a list."""
    entry = {"chassis": {"spine-001": {}}, "port": {"id": {"type": "local", "value": "Ethernet1/1"}}}
    several = json.dumps({"lldp": {"interface": [{"Ethernet7_1": entry}, {"rail0": entry}]}})
    renamed = json.loads(platform_names(several, {"Ethernet7_1": "Ethernet7/1"}))
    assert [next(iter(item)) for item in renamed["lldp"]["interface"]] == ["Ethernet7/1", "rail0"]
    one = json.loads(platform_names(json.dumps({"lldp": {"interface": {"Ethernet7_1": entry}}}),
                                    {"Ethernet7_1": "Ethernet7/1"}))
    assert one["lldp"]["interface"] == {"Ethernet7/1": entry}
    assert [n.local_port for n in parse_lldpctl_json(json.dumps(renamed))] == ["Ethernet7/1", "rail0"]
    assert platform_names("{}", {}) == "{}"  # a device whose ports keep their names is left as lldpctl wrote it
