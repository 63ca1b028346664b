"""The Pulumi program under the real Pulumi engine: `pulumi preview / up / refresh / destroy` of the
on-prem stacks, with a local state backend and no network, as docs/guides/onprem-go-live.md (Going live) has users do.

The CLI and the Python language host are built from source by scripts/pulumi_engine.sh (reused
when built); without Go, or when the build fails, these tests are skipped with the reason, and
fail under CI (CI=true). They share one copy of the project and one file backend; each test uses
its own stack. Deselect them with `-m "not engine"`.

Cloud stacks are not run here: their provider plugins cannot be fetched offline (they stay under
the SDK's mocks, tests/test_components_*.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import missing_tool
from test_components_support import ROOT
from test_policy_table import ONPREM_ROWS, ONPREM_STACKS

from cluster import parts as design_parts
from cluster.artifacts import render_part
from cluster.commands.plan import as_dict, as_text
from cluster.loader import load_stack
from cluster.pipeline import Valid, validate_mapping
from cluster.settings import design_sha256
from components.offline import STACK_TYPE, OfflineRun, Registration
from components.onprem import artifacts
from components.onprem.files import sha256

pytestmark = [pytest.mark.engine, pytest.mark.slow]

BUILD = ROOT / "scripts" / "pulumi_engine.sh"
VENDOR = ROOT.parent / "shared" / "vendor" / "pulumi"  # the vendored language host, beside the repo
PASSPHRASE = "engine tests: not a secret"
# What the copy of the project holds: what a clone has that `pulumi up` reads.
PROJECT_PARTS = ("Pulumi.yaml", "__main__.py", "requirements.txt", "cluster", "components", "policy", "stacks",
                 "examples")
MARKER = ".gpu-cluster-tree.json"  # render's own bookkeeping file, which `pulumi up` has no use for


@dataclass(frozen=True)
class Engine:
    """The built CLI, one copy of the project and one local (file://) backend."""

    project: Path
    env: Mapping[str, str]

    def run(self, *args: str, stack: str | None = None, ok: bool | None = True) -> subprocess.CompletedProcess[str]:
        """`pulumi ARGS` in the project (`--stack` when given); `ok` True / False: the exit status
        must be 0 / not 0 (the output is shown when it is not); None: not checked."""
        command = ["pulumi", *args, "--non-interactive", "--color", "never", *(["--stack", stack] if stack else [])]
        done = subprocess.run(command, cwd=self.project, env=dict(self.env), capture_output=True, text=True,
                              timeout=900, check=False)
        if ok is not None and (done.returncode == 0) != ok:
            pytest.fail(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
        return done

    def json(self, *args: str, stack: str, ok: bool | None = True) -> dict[str, Any]:
        """The JSON document a `--json` command prints first (refresh adds an event stream after it)."""
        done = self.run(*args, "--json", stack=stack, ok=ok)
        document, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{"):])
        return dict(document)

    def stack(self, name: str, design: Mapping[str, Any] | None = None) -> str:
        """Create stack `name`; `design` is written as its stack file first (stacks/Pulumi.<name>.yaml)."""
        if design is not None:
            text = yaml.safe_dump({"config": {"gpu-cluster:cluster": dict(design)}}, sort_keys=False)
            (self.project / "stacks" / f"Pulumi.{name}.yaml").write_text(text, encoding="utf-8")
        self.run("stack", "select", "--create", name)
        return name

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`python -m cluster ARGS` in the project."""
        return subprocess.run([sys.executable, "-m", "cluster", *args], cwd=self.project, env=dict(self.env),
                              capture_output=True, text=True, timeout=600, check=False)


def _build() -> Path:
    """The folder holding pulumi, pulumi-language-python and the runner scripts (built when missing)."""
    if not BUILD.is_file():
        missing_tool(f"{BUILD} is missing")
    env = {**os.environ, "GPU_CLUSTER_PULUMI_VENDOR": str(VENDOR)}
    done = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, env=env, timeout=3600, check=False)
    if done.returncode != 0:
        reason = {3: "Go is not installed", 4: f"the vendored language host is missing ({VENDOR})"}.get(
            done.returncode, "the build failed")
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        missing_tool(f"no Pulumi CLI: {reason} (scripts/pulumi_engine.sh exit {done.returncode}):\n{tail}")
    return Path(done.stdout.strip().splitlines()[-1])


def _venv(project: Path) -> Path:
    """`venv` (Pulumi.yaml's `virtualenv: venv`) as the interpreter running the tests: its own
    virtualenv, linked; no `pulumi install`, so nothing is downloaded."""
    venv = project / "venv"
    if sys.prefix != sys.base_prefix:
        venv.symlink_to(sys.prefix, target_is_directory=True)
    else:  # a system interpreter: a virtualenv that sees its packages
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    return venv


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    binaries = _build()
    base = tmp_path_factory.mktemp("engine")
    project = base / "project"
    project.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, project / part, ignore=shutil.ignore_patterns("__pycache__", "build", "venv"))
        else:
            shutil.copy2(source, project / part)
    venv = _venv(project)
    keep = {key: value for key, value in os.environ.items()
            if not key.startswith(("PULUMI_", "GPU_CLUSTER_", "AWS_", "GOOGLE_", "ARM_", "VIRTUAL_ENV"))}
    env = {
        **keep,
        # as `. venv/bin/activate` does: the policy pack runs with the python3 found on PATH
        "PATH": os.pathsep.join([str(binaries), str(venv / "bin"), keep.get("PATH", "")]),
        "VIRTUAL_ENV": str(venv),
        "PULUMI_HOME": str(base / "pulumi-home"),
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
    }
    running = Engine(project, env)
    (base / "state").mkdir()
    running.run("login", f"file://{base / 'state'}")
    yield running


# --- helpers ----------------------------------------------------------------------------------


def design_of(stack: str) -> dict[str, Any]:
    loaded = load_stack(stack)
    assert loaded.data is not None
    return dict(loaded.data)


def registrations(preview: Mapping[str, Any]) -> OfflineRun:
    """The engine's preview steps as the offline run `plan` prints (the same record type)."""
    run = OfflineRun(stack="")
    for step in preview["steps"]:
        state = step["newState"]
        if state["type"] == STACK_TYPE:
            run.stack_urn = state["urn"]
            run.stack = state["urn"].rsplit("::", 1)[-1].removeprefix("gpu-cluster-")
            continue
        run.resources.append(Registration(state["urn"], state["type"], state["urn"].rsplit("::", 1)[-1],
                                          state.get("parent", ""), bool(state["custom"]), state.get("inputs", {})))
    return run


def tree(directory: Path) -> dict[str, tuple[str, int]]:
    """{relative path: (content, mode)} of every file under `directory` but render's marker."""
    return {path.relative_to(directory).as_posix(): (path.read_text(encoding="utf-8"), path.stat().st_mode & 0o777)
            for path in sorted(directory.rglob("*")) if path.is_file() and path.name != MARKER}


def rendered(engine: Engine, stack: str, out: Path) -> dict[str, tuple[str, int]]:
    done = engine.cli("render", stack, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return tree(out)


def changed_files(preview: Mapping[str, Any]) -> dict[str, set[str]]:
    """{resource name: paths whose content hash changes} of every update step: the hashes in state
    (outputs: what was written, or found on disk by a refresh) against the new inputs, as the
    provider's diff compares them."""
    changed: dict[str, set[str]] = {}
    for step in preview["steps"]:
        if step["op"] != "update":
            continue
        old, new = step["oldState"].get("outputs") or {}, step["newState"]["inputs"]
        name = step["urn"].rsplit("::", 1)[-1]
        olds, news = old.get("hashes") or {}, new.get("hashes") or {}
        changed[name] = {path for path in set(olds) | set(news) if olds.get(path) != news.get(path)}
    return changed


def resources_in_state(engine: Engine, stack: str) -> list[dict[str, Any]]:
    exported = json.loads(engine.run("stack", "export", stack=stack).stdout)
    return list(exported["deployment"].get("resources") or [])


# --- preview is the plan ----------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_preview_registers_exactly_what_plan_prints(engine: Engine, stack: str) -> None:
    engine.stack(stack)
    preview = engine.json("preview", "--diff", stack=stack)
    plan = engine.cli("plan", stack, "--format", "json")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    offline = json.loads(plan.stdout)
    live = as_dict(registrations(preview))
    for engine_side, plan_side in zip(live["resources"], offline["resources"], strict=False):
        differing = sorted(key for key in set(engine_side) | set(plan_side) if engine_side.get(key) != plan_side.get(key))
        assert not differing, (engine_side["urn"], {key: (engine_side.get(key), plan_side.get(key)) for key in differing})
    assert live["resources"] == offline["resources"]  # types, names, parents, URNs, every input
    assert live["counts"] == offline["counts"]
    assert preview["changeSummary"] == {"create": offline["counts"]["resources"] + 1}  # and the stack itself
    # the tree `plan` prints, line for line, up to the outputs (unknown at preview: ids come at up)
    text = engine.cli("plan", stack).stdout
    assert as_text(live).split("\nOUTPUTS\n")[0] == text.split("\nOUTPUTS\n")[0].rstrip("\n")


def test_a_project_init_wrote_previews_what_plan_prints(engine: Engine, tmp_path: Path) -> None:
    """`init` in an empty folder writes a project (Pulumi.yaml: the python3 on PATH; __main__.py:
    the package's program) that the engine runs as it is, registering what `plan` prints there.
    The package is the project copy's, on PYTHONPATH, as an installed one would be on sys.path."""
    env = {**engine.env, "PYTHONPATH": str(engine.project)}

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
        return done

    run(sys.executable, "-m", "cluster", "init", "init-lab")
    run("pulumi", "stack", "select", "--create", "init-lab", "--non-interactive")
    done = run("pulumi", "preview", "--json", "--non-interactive", "--color", "never")
    preview, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{"):])
    offline = json.loads(run(sys.executable, "-m", "cluster", "plan", "init-lab", "--format", "json").stdout)
    assert as_dict(registrations(preview))["resources"] == offline["resources"]
    assert preview["changeSummary"] == {"create": offline["counts"]["resources"] + 1}


# --- up, refresh, destroy of rendered files -----------------------------------------------------


def test_up_writes_the_render_tree_and_a_second_up_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    stack = engine.stack("dev-up", design_of("dev"))
    engine.run("up", "--yes", stack=stack)
    written = tree(engine.project / "build" / stack)
    expected = rendered(engine, stack, tmp_path / "render")
    assert written == expected  # byte- and mode-identical (render's 0644, 0755 for scripts)
    assert any(mode == 0o755 for _, mode in written.values())
    engine.run("up", "--yes", "--expect-no-changes", stack=stack)
    again = engine.json("preview", stack=stack)
    assert set(again["changeSummary"]) == {"same"}


def test_editing_one_switch_changes_exactly_its_files(engine: Engine) -> None:
    stack = engine.stack("dev-edit", design_of("dev"))
    engine.run("up", "--yes", stack=stack)
    # the design input of the management leaf only (a 52-port box: its hosts keep their ports, as the
    # management network fills its leaves in order), set as Going live (docs/guides/onprem-go-live.md) shows
    engine.run("config", "set", "--path", "gpu-cluster:cluster.management.leaf.ports", "52", stack=stack)
    engine.run("config", "set", "--path", "gpu-cluster:cluster.management.leaf.port_gbps", "25", stack=stack)
    edited = yaml.safe_load((engine.project / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    assert edited["config"]["gpu-cluster:cluster"]["management"] == {"leaf": {"ports": 52, "port_gbps": 25}}
    preview = engine.json("preview", "--diff", stack=stack)
    changed = changed_files(preview)
    before, after = (validate_mapping(stack, design) for design in (design_of("dev"),
                                                                     edited["config"]["gpu-cluster:cluster"]))
    assert isinstance(before, Valid) and isinstance(after, Valid)
    old, new = render_part(before.spec, before.topology, "all"), render_part(after.spec, after.topology, "all")
    expected = {path for path in set(old) | set(new) if old.get(path) != new.get(path)}
    assert set().union(*changed.values()) == expected  # the engine's diff is the render's, file for file
    switch_files = {path for path in expected if path.startswith("switches/")}
    assert switch_files == {"switches/mgmt-leaf-001/nvue.sh"}
    # the switch's bundle, the cluster-wide files that list switches, and the recorded design
    assert changed == {"mgmt-leaf-001": {"switches/mgmt-leaf-001/nvue.sh"}, "bom": {"bom.csv"},
                       "inventory": {"inventory.json"}, "dev": set()}


def test_refresh_shows_a_hand_edit_and_up_rewrites_it(engine: Engine) -> None:
    stack = engine.stack("dev-refresh", design_of("dev"))
    engine.run("up", "--yes", stack=stack)
    edited = engine.project / "build" / stack / "switches" / "spine-001" / "frr.conf"
    original = edited.read_text()
    edited.write_text(original + "! hand edit\n")
    # (refresh's --json repeats the stored state in every step: the --diff text shows the drift)
    refresh = engine.run("refresh", "--preview-only", "--diff", stack=stack).stdout
    assert refresh.count("(update)") == 1 and "RenderedFiles::spine-001]" in refresh
    drift = [line.split() for line in refresh.splitlines() if "=>" in line]
    assert drift == [["~", "switches/spine-001/frr.conf", ":", f'"{sha256(original)}"', "=>",
                      f'"{sha256(edited.read_text())}"']]
    engine.run("refresh", "--yes", stack=stack)
    preview = engine.json("preview", "--diff", stack=stack)
    assert changed_files(preview) == {"spine-001": {"switches/spine-001/frr.conf"}}
    engine.run("up", "--yes", stack=stack)
    assert edited.read_text() == original


def test_up_refuses_a_file_it_did_not_write_and_destroy_removes_only_its_own(engine: Engine, tmp_path: Path) -> None:
    stack = engine.stack("dev-destroy", design_of("dev"))
    directory = engine.project / "build" / stack
    foreign = directory / "switches" / "spine-001" / "frr.conf"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("! someone else's config\n")
    # without --continue-on-error the engine stops starting resources at the first failure, so which
    # other bundles got written would depend on scheduling; with it, every other bundle is written
    failed = engine.run("up", "--yes", "--continue-on-error", stack=stack, ok=False)
    assert f"build/{stack}/switches/spine-001/frr.conf exists and was not written by gpu-cluster" in failed.stdout
    assert foreign.read_text() == "! someone else's config\n"
    expected = rendered(engine, stack, tmp_path / "render")
    written = tree(directory)
    refused = {path for path in expected if "spine-001" in path}  # the bundle of spine-001 wrote nothing
    assert refused == {"switches/spine-001/config_db.json", "switches/spine-001/frr.conf", "switches/spine-001/users.sh",
                       "verify/neighbors/spine-001.txt"}
    assert set(written) == set(expected) - refused | {"switches/spine-001/frr.conf"}
    assert all(written[path] == expected[path] for path in set(expected) - refused)
    # a file of someone else's beside them, and one written file edited by hand since
    (directory / "notes.txt").write_text("mine\n")
    edited = directory / "switches" / "leaf-001-r0" / "frr.conf"
    edited.write_text(edited.read_text() + "! hand edit\n")
    engine.run("destroy", "--yes", stack=stack)
    assert set(tree(directory)) == {"notes.txt", "switches/spine-001/frr.conf", "switches/leaf-001-r0/frr.conf"}
    assert resources_in_state(engine, stack) == []


# --- what stops `pulumi up` -------------------------------------------------------------------


def test_a_failing_design_logs_every_finding_and_registers_nothing(engine: Engine) -> None:
    stack = engine.stack("legacy")
    failed = engine.run("up", "--yes", stack=stack, ok=False)
    report = json.loads(engine.cli("validate", stack, "--format", "json").stdout)
    assert not report["ok"] and len(report["findings"]) >= 3
    for finding in report["findings"]:
        line = f"{finding['rule']} ({finding['severity']}) at {finding['path']}: {finding['message']}"
        assert f"error: {line}" in failed.stdout
    assert f"stack {stack} failed validation ({len(report['findings'])} findings): nothing was registered" in failed.stdout
    assert resources_in_state(engine, stack) == []
    assert not (engine.project / "build" / stack).exists()


def test_credentials_plain_config_stops_up_and_a_secret_stays_secret(engine: Engine) -> None:
    stack = engine.stack("dev-credentials", design_of("dev"))
    plain, secret = "plain-sentinel-6cd1", "secret-sentinel-93fa"
    engine.run("config", "set", "gpu-cluster:switch_password", plain, stack=stack)
    failed = engine.run("up", "--yes", stack=stack, ok=False)
    assert "gpu-cluster:switch_password is set in plain text" in failed.stdout
    assert plain not in failed.stdout + failed.stderr
    assert resources_in_state(engine, stack) == []
    engine.run("config", "rm", "gpu-cluster:switch_password", stack=stack)
    engine.run("config", "set", "--secret", "gpu-cluster:switch_password", secret, stack=stack)
    up = engine.run("up", "--yes", stack=stack)
    outputs = json.loads(engine.run("stack", "output", "--json", stack=stack).stdout)
    assert outputs["device_credentials"] == "[secret]"
    shown = json.loads(engine.run("stack", "output", "--json", "--show-secrets", stack=stack).stdout)
    assert shown["device_credentials"] == {"switch_password": secret}
    state = engine.run("stack", "export", stack=stack).stdout
    assert secret not in state and '"device_credentials"' in state  # stored encrypted
    assert secret not in up.stdout + up.stderr
    assert secret not in (engine.project / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert not any(secret in content for content, _ in tree(engine.project / "build" / stack).values())


# --- the CrossGuard pack through the engine's analyzer -----------------------------------------


@pytest.mark.parametrize("case, stack, config, policy", ONPREM_ROWS, ids=[row[0] for row in ONPREM_ROWS])
def test_policy_pack_decides_as_its_table(engine: Engine, tmp_path: Path, case: str, stack: str,
                                          config: dict[str, dict[str, Any]], policy: str | None) -> None:
    name = engine.stack(f"policy-{stack}", ONPREM_STACKS[stack]())
    settings = tmp_path / "policy-config.json"
    settings.write_text(json.dumps({key: {**value, "enforcementLevel": "mandatory"} for key, value in config.items()}))
    done = engine.run("preview", "--policy-pack", "policy", "--policy-pack-config", str(settings), stack=name,
                      ok=policy is None)
    assert "gpu-cluster@v0.1.0" in done.stdout  # the pack ran
    if policy is None:
        assert "mandatory" not in done.stdout and "advisory" not in done.stdout
        return
    assert f"[mandatory]  {policy}" in done.stdout
    # the same violation at enforcementLevel advisory warns and lets the preview through
    settings.write_text(json.dumps({key: {**value, "enforcementLevel": "advisory"} for key, value in config.items()}))
    warned = engine.run("preview", "--policy-pack", "policy", "--policy-pack-config", str(settings), stack=name)
    assert f"[advisory]  {policy}" in warned.stdout and "[mandatory]" not in warned.stdout


# --- one design, a core stack and pod stacks -----------------------------------------------------


def test_split_design_core_then_pods_through_a_real_stack_reference(engine: Engine, tmp_path: Path) -> None:
    for example in sorted((ROOT / "examples" / "split").glob("Pulumi.*.yaml")):  # as Going live step 8 says
        shutil.copy(example, engine.project / "stacks" / example.name)
    pod = engine.stack("pods-pod-002")
    early = engine.run("up", "--yes", stack=pod, ok=False)  # no core stack yet: the engine's read fails
    assert 'unknown stack "organization/gpu-cluster/pods-core"' in early.stdout
    core = engine.stack("pods-core")
    created = engine.run("up", "--yes", stack=pod, ok=False)  # a core stack, but not up: the pod's own check
    assert ("pod-002: the core stack organization/gpu-cluster/pods-core is not up (it has no outputs): run pulumi up "
            "on organization/gpu-cluster/pods-core first") in created.stdout
    assert resources_in_state(engine, pod) == []
    assert not (engine.project / "build" / "pods").exists()
    engine.run("up", "--yes", stack=core)
    engine.run("up", "--yes", stack=pod)
    reference = [item for item in resources_in_state(engine, pod) if item["type"] == "pulumi:pulumi:StackReference"]
    assert len(reference) == 1 and reference[0]["outputs"]["name"] == "organization/gpu-cluster/pods-core"
    sha = design_sha256(design_of("pods"))
    assert reference[0]["outputs"]["outputs"]["design_sha256"] == sha
    # the two stacks wrote exactly the core's and pod 2's files of the whole design's tree
    whole = validate_mapping("pods", design_of("pods"))
    assert isinstance(whole, Valid)
    owned = artifacts.split(render_part(whole.spec, whole.topology, "all"), whole.topology)
    parts = {path: content for bundles in owned.values() for bundle, files in bundles.items()
             if design_parts.of_bundle(whole.topology, bundle) in {"core", "pod-002"} for path, content in files.items()}
    assert len(parts) > len(render_part(whole.spec, whole.topology, "pod-002")) > 0
    written = tree(engine.project / "build" / "pods")
    assert {path: content for path, (content, _) in written.items()} == parts
    # the design changes after the core went up: a pod of the new design is refused, writes nothing
    design_file = engine.project / "stacks" / "Pulumi.pods.yaml"
    changed = yaml.safe_load(design_file.read_text())
    changed["config"]["gpu-cluster:cluster"]["qos"] = {"ecn": {"min_bytes": 160000, "max_bytes": 1500000}}
    design_file.write_text(yaml.safe_dump(changed, sort_keys=False))
    late = engine.stack("pods-pod-003")
    refused = engine.run("up", "--yes", stack=late, ok=False)
    new_sha = design_sha256(changed["config"]["gpu-cluster:cluster"])
    assert (f"pod-003: the core stack organization/gpu-cluster/pods-core is up with design {sha[:12]}, this stack "
            f"has {new_sha[:12]}; run pulumi up on organization/gpu-cluster/pods-core first") in refused.stdout
    assert [item["type"] for item in resources_in_state(engine, late)] == []
    assert tree(engine.project / "build" / "pods") == written
