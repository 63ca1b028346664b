"""mypy reads only the provider SDK services pyproject.toml lists (the SDKs are too large to read
whole): every service the components use must be listed, or its calls would go unchecked."""

from __future__ import annotations

import ast
import tomllib

from tests.conftest import ROOT

PROVIDERS = ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native")


def services_used() -> set[str]:
    """`pulumi_aws.ec2`, ...: every provider module the components import or reach by attribute."""
    used: set[str] = set()
    for path in sorted((ROOT / "components").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases.update({alias.asname or alias.name: alias.name for alias in node.names
                                if alias.name in PROVIDERS})
            elif isinstance(node, ast.ImportFrom) and node.module in PROVIDERS:
                used.update(f"{node.module}.{alias.name}" for alias in node.names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                used.add(f"{aliases[node.value.id]}.{node.attr}")
    return used


def test_every_provider_service_the_components_use_is_read_by_mypy() -> None:
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["overrides"]
    followed = {module for override in overrides if override.get("follow_imports") == "normal"
                for module in override["module"]}
    used = services_used()
    assert {"pulumi_aws.ec2", "pulumi_gcp.compute", "pulumi_azure_native.compute"} <= used  # the scan sees them
    assert sorted(used - followed) == []
    assert sorted(f"{module}.*" for module in used if f"{module}.*" not in followed) == []
