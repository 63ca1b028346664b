"""The cloud registry: every cloud target is one folder under cluster/clouds/ (the design side's
facts, found by its CLOUD) and one under components/ (its networks and node pools, imported by
the target's name); no module outside those folders names the cloud, except the few listed in
STILL_NAMED with the reason."""

from __future__ import annotations

import sys
import typing
from pathlib import Path

import pytest

from cluster import clouds
from cluster import stackfile as sf
from cluster.clouds import Cloud, cloud
from cluster.deployment import CloudPlan, cloud_plan
from cluster.exports.kubernetes import CloudKubernetes, cloud_kubernetes
from cluster.filesystems import plan
from components.targets import networks
from tests.conftest import ROOT
from tests.test_dialects import names_in_code

# Modules that still name a cloud (its target, or the scheduler.kind of its managed Kubernetes), and
# why. The list only shrinks: a module that no longer names them fails test_still_named_is_current
# until it leaves the list.
STILL_NAMED: dict[str, tuple[set[str], str]] = {
    "cluster/stackfile.py": ({"aws", "gcp", "azure", "eks", "gke", "aks"}, "the `target` and `scheduler.kind` "
                             "Literals, spelled out so the stack-file reference and a bad value's message list every "
                             "choice (test_the_stack_file_targets_are_the_folders)"),
    "cluster/dialects/sonic/render.py": ({"azure"}, "SONiC's own buffer profile key `AZURE`, no cloud"),
    "cluster/catalog/__init__.py": ({"gke"}, "an instance type's `gke_accelerator`, a key of the instance catalog "
                                    "(instances.yaml), which holds every cloud's instance types"),
    "cluster/estimate/fit.py": ({"aws", "gcp", "azure"}, "calibration rows and the regions their designs are "
                                "validated in: measured data, keyed by where it was measured"),
    "components/offline.py": ({"aws", "gcp", "azure", "eks"}, "the mocks answer the providers' resource and invoke "
                              "tokens (`aws:fsx/...`, `aws:eks/...`), which are the providers' own names"),
    "policy/gpu_cluster_policies.py": ({"aws", "gcp", "azure", "eks", "gke", "aks"}, "CrossGuard checks the "
                                       "providers' resources by their type tokens (`aws:ec2/...`), which are the "
                                       "providers' own names"),
}


def _names(name: str) -> set[str]:
    """What names a cloud: its target and the scheduler.kind of its managed Kubernetes (`eks`)."""
    return {name, clouds.cloud(name).kubernetes}


def _own(relative: str) -> set[str]:
    """The names of the cloud whose folder holds the module, if any."""
    parts = relative.split("/")
    if parts[0] == "cluster" and parts[1] == "clouds" and len(parts) > 3:
        return _names(parts[2])
    if parts[0] == "components" and len(parts) > 2 and parts[1] in clouds.clouds():
        return _names(parts[1])
    return set()


def offenders() -> dict[str, set[str]]:
    names = {word for name in clouds.names() for word in _names(name)}
    result = {}
    for folder in ("cluster", "components", "policy"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            named = names_in_code(path, names) - _own(relative)
            if named:
                result[relative] = named
    return result


def test_every_folder_with_a_cloud_is_a_target() -> None:
    folders = {path.parent.name for path in (ROOT / "cluster" / "clouds").glob("*/__init__.py")}
    assert set(clouds.clouds()) == folders
    assert all(name == entry.name for name, entry in clouds.clouds().items())


def test_every_cloud_has_its_plan_and_kubernetes_modules() -> None:
    """`plan`'s summary asks each cloud's cluster/clouds/<cloud>/plan.py for what needs the spec, the
    Kueue export its kubernetes.py for what its managed Kubernetes adds."""
    for name in clouds.names():
        assert isinstance(cloud_plan(name), CloudPlan), name
        assert isinstance(cloud_kubernetes(name), CloudKubernetes), name


def test_every_cloud_has_its_components_folder() -> None:
    for name in clouds.names():
        assert (ROOT / "components" / name / "network.py").is_file(), name
        assert (ROOT / "components" / name / "node_pool.py").is_file(), name


def test_the_stack_file_targets_are_the_folders() -> None:
    assert set(typing.get_args(sf.Target)) == {"onprem", *clouds.names()}


def test_no_module_outside_a_clouds_folders_names_that_cloud() -> None:
    unexpected = {path: named for path, named in offenders().items()
                  if not named <= STILL_NAMED.get(path, (set(), ""))[0]}
    assert unexpected == {}


def test_still_named_is_current() -> None:
    found = offenders()
    assert {path: found.get(path, set()) for path in STILL_NAMED} == {
        path: named for path, (named, _) in STILL_NAMED.items()}


def test_the_check_sees_a_cloud_named_in_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Docstrings may say AWS."""\n# and comments: gcp\nZONES = {"azure": 1}\ndef aws_quota(): pass\n')
    assert names_in_code(module, {"aws", "gcp", "azure"}) == {"aws", "azure"}


def test_an_unknown_target_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no cloud target 'openstack'"):
        cloud("openstack")
    with pytest.raises(ValueError, match="unknown target 'openstack'"):
        networks("openstack")


def test_a_new_cloud_is_one_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with a CLOUD beside the others is found, and the file system plan asks it."""
    folder = tmp_path / "labcloud"
    folder.mkdir()
    (folder / "__init__.py").write_text(
        "from cluster.clouds import Cloud, Home, Lustre\n"
        "CLOUD = Cloud(name='labcloud', provider='Lab Cloud', group='group', kubernetes='none', kubernetes_service='',\n"
        "              kubernetes_pool='', kubernetes_pools='',\n"
        "              lustre=Lustre(service='Lab Lustre', short='Lustre', tiers=(100,), size=lambda t, g: (4096, None)),\n"
        "              home=Home(service='Lab NFS', short='NFS', default_gib=1, smallest_gib=1, largest_gib=2,\n"
        "                        options='defaults', where='here'),\n"
        "              default_images={}, default_image_words='', image_needs='', quota='', egress='',\n"
        "              topology_labels=('lab/block',), data_buckets=('[a-z]{3,9}', 'a lab bucket name'))\n")
    monkeypatch.setattr(clouds, "__path__", [*clouds.__path__, str(tmp_path)])
    clouds.clouds.cache_clear()
    try:
        assert isinstance(cloud("labcloud"), Cloud) and "labcloud" in clouds.names()
        sized, problems = plan("labcloud", 8, sf.SharedFileSystem(capacity_tib=1))
        assert problems == [] and sized is not None and (sized.service, sized.capacity_gib) == ("Lab Lustre", 4096)
    finally:
        monkeypatch.undo()
        clouds.clouds.cache_clear()
        sys.modules.pop("cluster.clouds.labcloud", None)
    assert "labcloud" not in clouds.clouds()
