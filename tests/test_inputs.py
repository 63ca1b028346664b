"""Every input is read with a bound and only from a regular file (cluster/inputs.py): FIFOs never
block, /dev/zero never streams, a sparse file of gigabytes is not read past the limit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster import inputs
from cluster.inputs import Unreadable, read_bounded
from cluster.loader import MAX_BYTES
from tests.conftest import ROOT, modes_bind


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    # The timeout only turns a hang into a failure; nothing here measures time.
    return subprocess.run([sys.executable, "-m", "cluster", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)


@pytest.fixture()
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "Pulumi.fifo.yaml"
    os.mkfifo(path)
    return path


def test_a_sparse_file_of_gigabytes_is_read_no_further_than_the_limit(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    huge = tmp_path / "Pulumi.huge.yaml"
    with open(huge, "wb") as handle:
        handle.truncate(3 * 1024**3)  # 3 GiB, sparse: st_size says 3 GiB, reading it would take seconds
    read: list[int] = []
    real_read = os.read

    def counting(handle: int, size: int) -> bytes:
        chunk = real_read(handle, size)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(inputs.os, "read", counting)
    assert len(read_bounded(huge, MAX_BYTES, "stack file")) == MAX_BYTES + 1
    assert sum(read) == MAX_BYTES + 1
    monkeypatch.undo()
    done = cli("validate", str(huge))
    assert done.returncode == 2 and "larger than" in done.stdout + done.stderr


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/urandom", "directory"])
def test_a_stack_file_that_is_not_a_regular_file_is_refused_by_what_it_is(special: str, fifo: Path,
                                                                          tmp_path: Path) -> None:
    path = {"fifo": str(fifo), "directory": str(tmp_path)}.get(special, special)
    done = cli("validate", path)
    expected = {"fifo": "a FIFO", "directory": "a directory"}.get(special, "a character device")
    assert done.returncode == 2, done.stderr
    assert f"is {expected}, not a regular file" in done.stdout + done.stderr
    assert "not found" not in done.stdout + done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("option", ["--ib", "--ib-map", "--lldp"])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/urandom"])
def test_verify_inputs_never_block_or_stream(option: str, special: str, fifo: Path, tmp_path: Path) -> None:
    source = str(fifo) if special == "fifo" else special
    argv = ["verify", "superpod"]
    if option == "--lldp":
        folder = tmp_path / "lldp"
        folder.mkdir()
        (folder / "leaf-001.json").symlink_to(source)
        argv += ["--lldp", str(folder)]
    elif option == "--ib-map":
        ib = tmp_path / "ib.txt"
        ib.write_text("")
        argv += ["--ib", str(ib), "--ib-map", source]
    else:
        argv += ["--ib", source]
    done = cli(*argv)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "CABLE-INPUT at " in done.stdout and "not a regular file" in done.stdout  # a finding at the file
    assert "Traceback" not in done.stdout + done.stderr


def test_a_missing_input_is_named(tmp_path: Path) -> None:
    with pytest.raises(Unreadable, match="neighbor data not found"):
        read_bounded(tmp_path / "gone.json", 10, "neighbor data")


@pytest.mark.parametrize("option", ["stack", "--ib", "--lldp"])
def test_an_input_this_user_cannot_read_is_named_with_the_fix(option: str, tmp_path: Path) -> None:
    secret = tmp_path / ("neighbors" if option == "--lldp" else "input.yaml")
    if option == "--lldp":
        secret.mkdir()
        (secret / "leaf-001-r0.json").write_text("{}")
        (secret / "leaf-001-r0.json").chmod(0)
        unreadable = secret / "leaf-001-r0.json"
    else:
        secret.write_text("config: {}\n")
        secret.chmod(0)
        unreadable = secret
    argv = ["validate", str(secret)] if option == "stack" else ["verify", "dev", option, str(secret)]
    done = subprocess.run([*modes_bind(), sys.executable, "-m", "cluster", *argv], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{unreadable}: cannot read" in done.stdout
    assert "Permission denied: make it readable by the user that runs gpu-cluster" in done.stdout


def test_a_stack_name_found_nowhere_is_named_in_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package has no stacks/ of its own, only its examples: a name it does not hold
    either is missing as ./stacks/Pulumi.X.yaml, not a path inside site-packages; an example's name
    resolves to the package's copy; a name the checkout has resolves there."""
    from cluster import loader

    installed = tmp_path / "site-packages"
    (installed / "cluster" / "examples").mkdir(parents=True)
    (installed / "cluster" / "examples" / "Pulumi.prod.yaml").write_text("config: {}\n", encoding="utf-8")
    monkeypatch.setattr(loader, "PROJECT_ROOT", installed)
    monkeypatch.setattr(loader, "EXAMPLES", installed / "cluster" / "examples")
    monkeypatch.chdir(tmp_path)
    loaded = loader.load_stack("nosuch")
    [finding] = loaded.findings
    assert finding.rule == "SCHEMA" and "stacks/Pulumi.nosuch.yaml" in finding.message
    assert str(installed) not in finding.message
    assert loader.stack_path("prod") == installed / "cluster" / "examples" / "Pulumi.prod.yaml"
    monkeypatch.setattr(loader, "PROJECT_ROOT", ROOT)
    assert loader.stack_path("prod") == ROOT / "stacks" / "Pulumi.prod.yaml"
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text("config: {}\n", encoding="utf-8")
    assert loader.stack_path("prod") == Path("stacks") / "Pulumi.prod.yaml"


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled",
                                  "link"])
def test_kernel_interfaces_are_refused_by_the_path_they_resolve_to(path: str, tmp_path: Path) -> None:
    """/proc/self/environ is a regular file to stat(), and holds every credential of the process."""
    if path == "link":
        (tmp_path / "ib.txt").symlink_to("/proc/self/environ")
        path = str(tmp_path / "ib.txt")
    with pytest.raises(Unreadable, match=r"ibnetdiscover output is under /(proc|sys).*a kernel interface") as refused:
        read_bounded(Path(path), 1024, "ibnetdiscover output")
    assert "=" not in str(refused.value).split("interface", 1)[1]  # nothing of the file is quoted
    done = cli("validate", "/proc/self/environ")
    assert done.returncode == 2 and "stack file is under /proc" in done.stdout


SECRET = "s3cr3t-Value"


@pytest.mark.parametrize("line", [
    f"password={SECRET}", f"export GPU_CLUSTER_SWITCH_PASSWORD='{SECRET}'", f"passwd: {SECRET}",
    f'{{"password": "{SECRET}", "user": "admin"}}', f"Authorization: Bearer {SECRET}", f"X-Auth-Token: {SECRET}",
    f"api_key = {SECRET}", f"client_secret={SECRET}", f"credentials: {SECRET}", f"curl -H 'Bearer {SECRET}'",
    f"SHELL=/bin/bash\x00BMC_TOKEN={SECRET}\x00", f"ssh-key:{SECRET}",
])
def test_an_excerpt_never_holds_what_follows_a_secret_looking_key(line: str) -> None:
    shown = inputs.excerpt(line)
    assert SECRET not in shown and SECRET.lower() not in shown.lower()
    assert "the rest is not shown" in shown


def test_an_excerpt_is_short_escaped_and_says_how_long_the_input_was() -> None:
    assert inputs.excerpt("CA 0 1 0x1 4x HDR") == "'CA 0 1 0x1 4x HDR'"
    long = inputs.excerpt("\x1b[2J" + "x" * 5_000_000)
    assert long.isprintable() and len(long) < 100
    assert long.startswith("'\\x1b[2Jxxx") and long.endswith("...' (5,000,004 characters)")
