"""Helpers (no tests) for the Pulumi tests: run the program offline and query what the mocks recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# The example stack's Azure admin key (its key bytes spell what it is): a scale set needs one.
EXAMPLE_KEY = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGdwdS1jbHVzdGVyIGV4YW1wbGUga2V5LCByZXBsYWNl "
               "example-only-replace-with-your-key")


def cloud_stack(target: str, instance_type: str, nodes: int = 4, **cloud: Any) -> dict[str, Any]:
    """A one-pool stack on `target`; `cloud` settings override the defaults, None drops one."""
    zone = {"aws": "us-east-1a", "gcp": "us-central1-b", "azure": None}[target]
    region = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus"}[target]
    login = {"ssh_public_key": EXAMPLE_KEY} if target == "azure" else {}
    settings: dict[str, Any] = {"region": region, **({"zone": zone} if zone else {}), **login, **cloud}
    settings = {key: value for key, value in settings.items() if value is not None}
    return {"name": "t", "target": target, "cloud": settings,
            "node_pools": [{"name": "gpu", "nodes": nodes, "instance_type": instance_type}]}


def of_type(outcome: Any, suffix: str) -> list[Any]:
    """Recorded registrations whose type ends with `suffix` (e.g. 'LaunchTemplate')."""
    return [registration for registration in outcome.resources if registration.type.endswith(suffix)]


def one(outcome: Any, suffix: str) -> Any:
    found = of_type(outcome, suffix)
    assert len(found) == 1, [registration.name for registration in found]
    return found[0]


def assert_well_formed(outcome: Any) -> None:
    """No name collisions (recorded count == distinct URNs) and every parent was registered."""
    urns = [registration.urn for registration in outcome.resources]
    assert len(urns) == len(set(urns))
    known = {*urns, outcome.stack_urn}
    assert all(registration.parent in known for registration in outcome.resources)


def run_program(data: dict[str, Any], stack: str = "t", artifacts_dir: str | None = None) -> Any:
    """Run __main__.py under fresh mocks (set_mocks is process-global: call it per test, never
    at import) and check the recording is well formed."""
    from components import offline

    outcome = offline.run(stack, data, artifacts_dir=artifacts_dir)
    assert_well_formed(outcome)
    return outcome
