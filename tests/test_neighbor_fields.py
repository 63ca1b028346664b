"""What LLDP neighbor files carry beyond the link: the neighbor's system description (a switch names
its model there) and the speed lldpd prints as an 802.3 MAU type, in Gb/s and in Mb/s forms."""

from __future__ import annotations

import pytest

from cluster.lldp import mau_gbps
from cluster.verify.parsers import parse_lldp
from tests.conftest import ROOT

LAB = ROOT / "tests" / "data" / "import" / "lab-dev"


@pytest.mark.parametrize(("mau", "gbps"), [
    ("400GbaseCR8", 400.0), ("10GbaseT - Four-pair Category 6A", 10.0), ("10GigBaseR", 10.0),
    ("1000BaseTFD - Four-pair Category 5 UTP, full duplex mode", 1.0), ("100BaseTXFD", 0.1), ("base", None),
    ("99999999BaseT", None),
])
def test_mau_types_as_lldpd_prints_them(mau: str, gbps: float | None) -> None:
    assert mau_gbps(mau) == gbps


def test_a_neighbors_system_description_is_kept() -> None:
    """Recorded from `lab lldp dev`: a host sees its leaf's description, which names the model."""
    neighbors = parse_lldp((LAB / "h200-node-001.json").read_text())
    leaf = next(neighbor for neighbor in neighbors if neighbor.remote_device == "leaf-001-r0")
    assert leaf.remote_description == "gpu-cluster lab switch, model SN5600"
    host = next(neighbor for neighbor in parse_lldp((LAB / "leaf-001-r0.json").read_text())
                if neighbor.remote_device == "h200-node-001")
    assert host.remote_description.startswith("Debian GNU/Linux")


def test_json0_keeps_the_description_too() -> None:
    text = ('{"lldp": [{"interface": [{"name": "swp1", "chassis": [{"name": [{"value": "spine-001"}], '
            '"descr": [{"value": "Cumulus Linux version 5.9 running on Nvidia SN5600"}]}], '
            '"port": [{"id": [{"value": "swp9"}]}]}]}]}')
    [neighbor] = parse_lldp(text)
    assert (neighbor.remote_device, neighbor.remote_description) == ("spine-001", "Cumulus Linux version 5.9 running "
                                                                                  "on Nvidia SN5600")
