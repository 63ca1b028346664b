"""On premises: rendered files as dynamic-provider resources, and the provider itself called
directly on a temporary directory (under mocks its create() never runs)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_components_support import ROOT, of_type, run_program

from cluster.artifacts import render_tree
from cluster.loader import load_stack
from cluster.pipeline import Valid, validate
from components.onprem import artifacts
from components.onprem.files import FilesProvider, bundle_inputs, safe_relative, sha256, unpack


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


@pytest.mark.parametrize("stack", ["dev", "prod", "superpod"])
def test_every_rendered_file_is_in_exactly_one_resource_of_its_owner(
        program: Callable[..., Any], stack: str) -> None:
    result = validate(stack)
    assert isinstance(result, Valid)
    tree = render_tree(result.spec, result.topology)
    outcome = program(load_stack(stack).data, stack=stack, artifacts_dir="build/x")
    components = {r.urn: r.type.split(":")[-1] for r in outcome.resources if not r.custom}
    files = {r.name: r for r in of_type(outcome, "RenderedFiles")}
    kinds = {"fabric": "GpuFabric", "storage": "StorageNetwork", "management": "ManagementNetwork",
             "cluster": "GpuCluster"}
    switches = dict(result.topology.switches())
    assert set(switches) | {f"{pool.name}-hosts" for pool in result.spec.pools} <= set(files)
    seen: dict[str, str] = {}
    for name, resource in files.items():
        assert resource.inputs["directory"] == "build/x"
        stored = resource.inputs["files"]
        assert resource.inputs["hashes"] == {path: sha256(unpack(text)) for path, text in stored.items()}
        for path, text in stored.items():
            assert path not in seen, f"{path} in {seen.get(path)} and {name}"
            seen[path] = name
            assert unpack(text) == tree[path]  # byte for byte what `render` writes
            component, bundle = artifacts.owner(path, result.topology)
            assert bundle == name
            expected = "GpuNodePool" if component.startswith("pool:") else kinds[component]
            assert components[resource.parent] == expected
    assert set(seen) == set(tree)
    for name in switches:  # a switch's own files travel in its own resource
        assert f"verify/neighbors/{name}.txt" in files[name].inputs["files"]


def test_pulumi_writes_the_render_tree() -> None:
    result = validate("dev")
    assert isinstance(result, Valid)
    rendered = artifacts.render(result.spec, result.topology)
    assert rendered == render_tree(result.spec, result.topology)
    assert {path.split("/")[0] for path in rendered} >= {"switches", "hosts", "slurm", "verify"}
    assert rendered == artifacts.render(result.spec, result.topology)  # deterministic


def test_provider_pickle_is_tiny_and_by_reference(program: Callable[..., Any]) -> None:
    outcome = program(load_stack("dev").data, stack="dev")
    pickled = {r.inputs["__provider"] for r in of_type(outcome, "RenderedFiles")}
    assert len(pickled) == 1
    blob = base64.b64decode(next(iter(pickled)))
    assert len(blob) < 120 and b"components.onprem.files" in blob and b"FilesProvider" in blob


def test_create_diff_update_delete(tmp_path: Path) -> None:
    provider = FilesProvider()
    directory = str(tmp_path / "out")
    first = bundle_inputs(directory, "leaf-001", {"switches/leaf-001.json": "{}\n", "switches/leaf-001.frr": "a\n"})
    created = provider.create(first)
    assert (tmp_path / "out/switches/leaf-001.json").read_text() == "{}\n"
    assert "files" not in created.outs and created.outs["hashes"] == first["hashes"]
    assert provider.diff(created.id, created.outs, first).changes is False
    second = bundle_inputs(directory, "leaf-001", {"switches/leaf-001.json": '{"asn": 1}\n'})
    diff = provider.diff(created.id, created.outs, second)
    assert diff.changes is True and diff.replaces == []
    updated = provider.update(created.id, created.outs, second)
    assert (tmp_path / "out/switches/leaf-001.json").read_text() == '{"asn": 1}\n'
    assert not (tmp_path / "out/switches/leaf-001.frr").exists()  # dropped from the bundle
    moved = bundle_inputs(str(tmp_path / "elsewhere"), "leaf-001", {"switches/leaf-001.json": '{"asn": 1}\n'})
    assert provider.diff(created.id, updated.outs, moved).replaces == ["directory"]
    provider.delete(created.id, updated.outs)
    assert list((tmp_path / "out").iterdir()) == []
    assert not list(tmp_path.glob("out/**/.*"))  # no temporary files left behind


def test_update_rewrites_a_file_changed_on_disk_only_when_missing(tmp_path: Path) -> None:
    provider = FilesProvider()
    props = bundle_inputs(str(tmp_path), "h", {"hosts/h.json": "x\n"})
    outs = provider.create(props).outs
    (tmp_path / "hosts/h.json").unlink()
    provider.update("id", outs, props)
    assert (tmp_path / "hosts/h.json").read_text() == "x\n"


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../x", "", "a\\b"])
def test_paths_must_stay_inside_the_directory(path: str) -> None:
    with pytest.raises(ValueError, match="inside the artifacts directory"):
        safe_relative(path)


def test_owner_follows_the_device_a_path_names() -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    topology = result.topology
    assert artifacts.owner("switches/leaf-001-r0/config_db.json", topology) == ("fabric", "leaf-001-r0")
    assert artifacts.owner("sonic/stor-leaf-001.json", topology) == ("storage", "stor-leaf-001")
    assert artifacts.owner("oob-leaf-001.cfg", topology) == ("management", "oob-leaf-001")
    assert artifacts.owner("hosts/h200/h200-node-001.sh", topology) == ("pool:h200", "h200-hosts")
    assert artifacts.owner("topology/slurm-topology.conf", topology) == ("cluster", "topology")
    assert artifacts.owner("inventory.json", topology) == ("cluster", "inventory")
    assert artifacts.owner("fabric/opensm.conf", topology) == ("fabric", "fabric")


def test_the_provider_host_can_unpickle_and_run_the_provider(program: Callable[..., Any], tmp_path: Path) -> None:
    """What `pulumi up` does: a fresh `python -m pulumi.dynamic` process started in the project
    directory unpickles the provider from state and calls create()."""
    outcome = program(load_stack("dev").data, stack="dev", artifacts_dir=str(tmp_path))
    leaf = next(r for r in of_type(outcome, "RenderedFiles") if r.name == "leaf-001-r0")
    props = {key: value for key, value in leaf.inputs.items() if key != "__provider"}
    code = (
        "import base64, json, sys, dill\n"
        "provider = dill.loads(base64.b64decode(sys.argv[1]))\n"
        "print(provider.create(json.loads(sys.argv[2])).id)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, leaf.inputs["__provider"], json.dumps(props)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for path, text in props["files"].items():
        assert (tmp_path / path).read_text() == unpack(text)
    assert any(path.startswith("switches/leaf-001-r0/") for path in props["files"])


def test_refresh_sees_a_hand_edit_and_the_next_diff_rewrites_it(tmp_path: Path) -> None:
    provider = FilesProvider()
    props = bundle_inputs(str(tmp_path), "leaf-001", {"switches/leaf-001/frr.conf": "router bgp 65001\n"})
    outs = provider.create(props).outs
    assert provider.read("id", outs).outs["hashes"] == outs["hashes"]  # nothing changed
    (tmp_path / "switches/leaf-001/frr.conf").write_text("router bgp 1\n")
    refreshed = provider.read("id", outs).outs
    assert refreshed["hashes"] != outs["hashes"]
    assert provider.diff("id", refreshed, props).changes is True
    provider.update("id", refreshed, props)
    assert (tmp_path / "switches/leaf-001/frr.conf").read_text() == "router bgp 65001\n"


def test_create_never_replaces_a_file_it_did_not_write(tmp_path: Path) -> None:
    provider = FilesProvider()
    (tmp_path / "switches").mkdir()
    (tmp_path / "switches" / "leaf-001.json").write_text("a user's own file\n")
    (tmp_path / "elsewhere.txt").write_text("target\n")
    (tmp_path / "switches" / "leaf-002.json").symlink_to(tmp_path / "elsewhere.txt")
    for name in ("leaf-001.json", "leaf-002.json"):
        with pytest.raises(RuntimeError, match="was not written by gpu-cluster"):
            provider.create(bundle_inputs(str(tmp_path), "b", {f"switches/{name}": "{}\n", "switches/new.json": "x\n"}))
    assert (tmp_path / "switches" / "leaf-001.json").read_text() == "a user's own file\n"
    assert (tmp_path / "switches" / "leaf-002.json").is_symlink() and not (tmp_path / "switches" / "new.json").exists()
    same = bundle_inputs(str(tmp_path), "c", {"switches/leaf-001.json": "a user's own file\n"})
    provider.create(same)  # the same content: nothing is lost


def test_delete_leaves_a_file_changed_since_it_was_written(tmp_path: Path) -> None:
    provider = FilesProvider()
    outs = provider.create(bundle_inputs(str(tmp_path), "h", {"hosts/a.sh": "a\n", "hosts/b.sh": "b\n"})).outs
    (tmp_path / "hosts" / "b.sh").write_text("my own changes\n")
    provider.delete("id", outs)
    assert not (tmp_path / "hosts" / "a.sh").exists()
    assert (tmp_path / "hosts" / "b.sh").read_text() == "my own changes\n"


def test_written_files_get_render_s_modes(tmp_path: Path) -> None:
    """Found by the engine (tests/test_engine.py): files were left 0600 by the temporary file they
    are written through, so `pulumi up` wrote host scripts nobody could run."""
    props = bundle_inputs(str(tmp_path), "h200-hosts", {"hosts/h200/qos.sh": "#!/bin/sh\n", "hosts/h200/nccl.env": "A=1\n"})
    FilesProvider().create(props)
    assert (tmp_path / "hosts/h200/qos.sh").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "hosts/h200/nccl.env").stat().st_mode & 0o777 == 0o644
