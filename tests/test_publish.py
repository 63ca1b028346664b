"""`--out` never replaces what gpu-cluster did not write, and a publish is atomic under kill -9,
SIGTERM and concurrent runs (cluster/publish.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from cluster import publish
from cluster.cli import main
from cluster.publish import MARKER, OutputRefused, check, publish_file, publish_tree
from tests.conftest import ROOT, missing_tool

OLD = {f"switches/leaf-{n:03d}/config.txt": f"old {n}\n" for n in range(1, 13)} | {"inventory.json": "{}\n"}
NEW = {f"switches/leaf-{n:03d}/config.txt": f"new {n}\n" for n in range(3, 20)} | {"hosts/h200/qos.sh": "#!/bin/sh\n"}


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under `root` (itself included) by kind and content hash, never following links."""
    def describe(path: Path) -> str:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return f"link {os.readlink(path)}"
        if stat.S_ISREG(info.st_mode):
            return f"file {oct(info.st_mode)} {hashlib.sha256(path.read_bytes()).hexdigest()}"
        return f"{stat.filemode(info.st_mode)} {info.st_rdev}"

    if not os.path.lexists(root):
        return {}
    seen = {".": describe(root)}
    if root.is_dir() and not root.is_symlink():
        for folder, dirs, names in os.walk(root):
            for name in dirs + names:
                path = Path(folder) / name
                seen[str(path.relative_to(root))] = describe(path)
    return seen


def tree_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file() and p.name != MARKER}


def publish_as(files: Mapping[str, str], out: Path, stack: str = "t", batches: int = 1) -> list[str]:
    """Publish `files` in one call, or as `batches` batches of the sorted paths, as `render` streams them
    (the later batches made only once the earlier are written)."""
    if batches == 1:
        return publish_tree(files, check(str(out), "render", stack), "render", stack)
    names = sorted(files, reverse=True)  # not in path order: a renderer's order is its own
    size = -(-len(names) // batches)
    made = ({name: files[name] for name in names[start:start + size]} for start in range(0, len(names), size))
    return publish.publish_batches(made, check(str(out), "render", stack), "render", stack)


def render_cli(out: str, capsys: pytest.CaptureFixture[str], verb: str = "render") -> tuple[int, str]:
    code = main([verb, "dev", "--out", out])
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- refusals, checksums before and after


def _make(kind: str, path: Path) -> None:
    if kind == "regular file":
        path.write_text("a user's notes\n")
    elif kind == "directory of a user's files":
        path.mkdir()
        (path / "thesis.tex").write_text("years of work\n")
        (path / "sub").mkdir()
        (path / "sub" / "data.csv").write_text("1,2\n")
    elif kind == "symlink to a user's directory":
        (path.parent / "real").mkdir()
        (path.parent / "real" / "keep.txt").write_text("keep\n")
        path.symlink_to(path.parent / "real")
    elif kind == "dangling symlink":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "character device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a second /dev/null
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "another stack's tree":
        publish_as({"a.txt": "x\n"}, path, stack="prod")
    elif kind == "our tree with a user's file added":
        publish_as({"a.txt": "x\n"}, path, stack="dev")
        (path / "mine.txt").write_text("mine\n")
    elif kind == "our tree with a user's empty folder":
        publish_as({"a/b.txt": "x\n"}, path, stack="dev")
        (path / "a" / "c").mkdir()
    elif kind == "a forged marker naming files outside":
        path.mkdir()
        (path / MARKER).write_text(json.dumps({"written_by": "gpu-cluster", "verb": "render", "stack": "dev",
                                               "files": ["../victim.txt"]}))
        (path.parent / "victim.txt").write_text("outside the tree\n")
    elif kind == "our tree with a listed folder turned into a link":
        publish_as({"hosts/h200/qos.sh": "x\n"}, path, stack="dev")
        shutil.rmtree(path / "hosts")
        (path.parent / "elsewhere" / "h200").mkdir(parents=True)
        (path.parent / "elsewhere" / "h200" / "qos.sh").write_text("a user's script\n")
        (path / "hosts").symlink_to(path.parent / "elsewhere")
    else:
        raise AssertionError(kind)


KINDS = ["regular file", "directory of a user's files", "symlink to a user's directory", "dangling symlink",
         "character device", "FIFO", "socket", "another stack's tree", "our tree with a user's file added",
         "our tree with a user's empty folder", "a forged marker naming files outside",
         "our tree with a listed folder turned into a link"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("verb", ["render", "export"])
def test_out_refuses_what_it_did_not_write_and_leaves_it_unchanged(
        kind: str, verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if kind == "character device" and os.geteuid() != 0:
        pytest.skip("mknod of a device needs root")
    out = tmp_path / "out"
    _make(kind, out)
    if verb == "export" and kind.startswith("our tree"):
        (out / MARKER).write_text((out / MARKER).read_text().replace('"render"', '"export"'))
    before = snapshot(tmp_path)
    code, err = render_cli(str(out), capsys, verb)
    assert code == 2, err
    assert "nothing was written" in err and "Traceback" not in err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("raw", ["", "   ", ".", "./", "..", "/", "//", "/.."])
def test_out_refuses_empty_root_and_the_working_directory(
        raw: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "repo" / "sub"
    work.mkdir(parents=True)
    (work / "file.txt").write_text("keep\n")
    monkeypatch.chdir(work)
    before = snapshot(tmp_path)
    code, err = render_cli(raw, capsys)
    assert code == 2 and "Traceback" not in err
    assert ("empty" in err) if not raw.strip() else ("root directory" in err or "working directory" in err)
    assert snapshot(tmp_path) == before


def test_out_refuses_an_ancestor_reached_through_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "real" / "work").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "real" / "work")
    code, err = render_cli(str(tmp_path / "alias"), capsys)
    assert code == 2 and "symbolic link" in err
    code, err = render_cli(str(tmp_path / "alias" / "work" / ".."), capsys)
    assert code == 2 and "ancestor of the working directory" in err


def test_the_real_cli_refuses_dev_null_and_the_repository(tmp_path: Path) -> None:
    """As users run it: `--out /dev/null`, `--out "$UNSET"`, `--out .` in a git checkout."""
    repo = tmp_path / "checkout"
    shutil.copytree(ROOT / "stacks", repo / "stacks")
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before, null_before = snapshot(repo), os.stat("/dev/null")
    for out in ["/dev/null", "", "."]:
        done = subprocess.run([sys.executable, "-m", "cluster", "render", "dev", "--out", out], cwd=repo,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 2, (out, done.stderr)
        assert "Traceback" not in done.stderr and ("nothing was written" in done.stderr or "give" in done.stderr)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (null_before.st_ino, null_before.st_rdev)
    assert snapshot(repo) == before


def test_out_replaces_its_own_tree_and_an_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    publish_as(OLD, out)
    assert tree_files(out) == OLD
    publish_as(NEW, out)
    assert tree_files(out) == NEW
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging, no lock left
    assert json.loads((out / MARKER).read_text())["files"] == sorted(NEW)
    assert (out / "hosts" / "h200" / "qos.sh").stat().st_mode & 0o111


def test_removal_deletes_only_listed_files(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    publish_as({"a/b.txt": "x\n", "c.txt": "y\n"}, tree)
    (tree / "a" / "user.txt").write_text("mine\n")
    left = publish.remove_owned(tree, publish.read_manifest(tree))
    assert left == ["a", "a/user.txt"] and (tree / "a" / "user.txt").read_text() == "mine\n"
    assert not (tree / "c.txt").exists() and not (tree / MARKER).exists()


# --------------------------------------------------------------------------- report --out


def test_report_writes_only_regular_files_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.html"
    assert main(["report", "dev", "--out", str(report)]) == 0
    assert publish.FILE_MARK in report.read_text()[:4096]
    assert main(["report", "dev", "--out", str(report)]) == 0  # its own file: replaced
    empty = tmp_path / "empty.html"
    empty.touch()
    assert main(["report", "dev", "--out", str(empty)]) == 0
    capsys.readouterr()
    device = tmp_path / "null"
    if os.geteuid() == 0:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    (tmp_path / "notes.md").write_text("# mine\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link.html").symlink_to(report)
    before = snapshot(tmp_path)
    for name in ["notes.md", "folder", "link.html", "", *(["null"] if os.geteuid() == 0 else [])]:
        code = main(["report", "dev", "--out", str(tmp_path / name) if name else ""])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err, (name, err)
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["r.html", "empty.html", "notes.md", "folder",
                                                                 "link.html", *(["null"] if os.geteuid() == 0 else [])])


def test_publish_file_refuses_text_without_the_mark(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        publish_file(publish.check_file(str(tmp_path / "x.html")), "<html></html>")


# --------------------------------------------------------------------------- kill -9 at every step


def _in_child(work: Callable[[], None]) -> int:
    """Run `work` in a forked child; its wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            work()
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def _stop_at(index: int, signum: int) -> Callable[[str], None]:
    seen = [0]

    def step(_what: str) -> None:
        seen[0] += 1
        if seen[0] == index:
            os.kill(os.getpid(), signum)

    return step


def _steps(files: Mapping[str, str], out: Path, batches: int = 1) -> int:
    names: list[str] = []
    original = publish.step
    publish.step = names.append
    try:
        publish_as(files, out, batches=batches)
    finally:
        publish.step = original
    return len(names)


@pytest.fixture()
def one_step_each() -> Iterator[None]:
    original = publish.step
    yield
    publish.step = original


@pytest.mark.parametrize("batches", [1, 3])
@pytest.mark.parametrize("exchange", ["atomic", "no exchange on this file system"])
def test_kill_9_at_every_step_leaves_the_old_tree_or_the_whole_new_one(
        exchange: str, batches: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_step_each: None) -> None:
    if exchange != "atomic":
        monkeypatch.setattr(publish, "exchange", lambda _a, _b: False)
    probe = tmp_path / "probe"
    publish_as(OLD, probe)
    total = _steps(NEW, probe, batches)
    assert total > len(NEW) + len(OLD)  # every write and every removal is a step
    for index in range(1, total + 1):
        out = tmp_path / f"run{index}" / "out"
        publish_as(OLD, out)

        def work(index: int = index, out: Path = out) -> None:
            publish.step = _stop_at(index, signal.SIGKILL)
            publish_as(NEW, out, batches=batches)

        status = _in_child(work)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, index
        found = tree_files(out) if out.is_dir() else None
        if exchange == "atomic":
            assert found in (OLD, NEW), f"kill at step {index}: a tree that is neither"
        else:  # the one gap of a two-rename swap: the next run restores the old tree
            assert found in (OLD, NEW, None), f"kill at step {index}: a tree that is neither"
        publish_as(NEW, out)  # the next run cleans up what the killed one left
        assert tree_files(out) == NEW
        assert sorted(p.name for p in out.parent.iterdir()) == ["out"], f"leftovers after a kill at step {index}"


def test_sigterm_at_every_step_removes_the_staging_tree(tmp_path: Path, one_step_each: None) -> None:
    probe = tmp_path / "probe"
    publish_as(OLD, probe)
    total = _steps(NEW, probe)
    for index in range(1, total + 1):
        out = tmp_path / f"run{index}" / "out"
        publish_as(OLD, out)

        def work(index: int = index, out: Path = out) -> None:
            publish.step = _stop_at(index, signal.SIGTERM)
            try:
                publish_as(NEW, out)
            except publish.Interrupted:
                os._exit(143)

        status = _in_child(work)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 143, index  # stopped, also after the swap
        assert tree_files(out) == (OLD if index <= len(NEW) + 2 else NEW), index
        assert sorted(p.name for p in out.parent.iterdir()) == ["out"], f"leftovers after SIGTERM at step {index}"


def test_batches_publish_the_tree_one_call_publishes(tmp_path: Path) -> None:
    publish_as(NEW, tmp_path / "one")
    publish_as(NEW, tmp_path / "three", batches=3)
    assert tree_files(tmp_path / "three") == tree_files(tmp_path / "one") == NEW
    assert (tmp_path / "three" / MARKER).read_text() == (tmp_path / "one" / MARKER).read_text()


@pytest.mark.parametrize("second", [{"inventory.json": "again\n"}, {"../outside": "x\n"}, {MARKER: "{}"}])
def test_a_batch_that_repeats_a_path_or_leaves_the_tree_publishes_nothing(second: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    publish_as(OLD, out)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match="given once"):
        publish.publish_batches(iter([{"inventory.json": "new\n"}, second]), check(str(out), "render", "t"),
                                "render", "t")
    assert snapshot(tmp_path) == before  # the old tree, and nothing staged beside it


def test_a_renderer_that_fails_mid_stream_publishes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    publish_as(OLD, out)
    before = snapshot(tmp_path)

    def made() -> Iterator[dict[str, str]]:
        yield {"a.txt": "a\n"}
        raise RuntimeError("a template failed")

    with pytest.raises(RuntimeError):
        publish.publish_batches(made(), check(str(out), "render", "t"), "render", "t")
    assert snapshot(tmp_path) == before


@pytest.mark.slow
def test_the_real_cli_killed_by_strace_at_renames_writes_and_removals(tmp_path: Path) -> None:
    """kill -9 injected by strace at system calls of a real `render` (not at our own step hook):
    before the marker's rename, before the exchange, while writing, while removing the old tree."""
    if shutil.which("strace") is None:
        missing_tool("strace is not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    changed = tmp_path / "design" / "Pulumi.dev.yaml"
    changed.parent.mkdir()
    changed.write_text((ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("nodes: 4", "nodes: 3"))
    out = tmp_path / "out"

    def render(stack: str, *prefix: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, sys.executable, "-m", "cluster", "render", stack, "--out", str(out)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)

    assert render(str(changed)).returncode == 0
    new = tree_files(out)
    shutil.rmtree(out)
    for syscalls, when in [("rename", 1), ("renameat2", 1), ("openat", 40), ("mkdir", 12),
                           ("unlink", 1), ("unlink", 20), ("rmdir", 3)]:
        assert render("dev").returncode == 0
        old = tree_files(out)
        assert old != new
        killed = render(str(changed), "strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscalls}",
                        "-e", f"inject={syscalls}:signal=SIGKILL:when={when}")
        assert killed.returncode != 0, (syscalls, when, killed.stdout)
        assert tree_files(out) in (old, new), (syscalls, when)
        assert render(str(changed)).returncode == 0
        assert tree_files(out) == new
        assert sorted(p.name for p in tmp_path.iterdir()) == ["design", "out"], (syscalls, when)


# --------------------------------------------------------------------------- concurrent runs


def test_parallel_publishes_into_one_path_serialize(tmp_path: Path) -> None:
    out = tmp_path / "out"
    trees = [{f"f{n}.txt": f"run {run}\n" for n in range(40)} for run in range(6)]
    pids = []
    for files in trees:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                publish_as(files, out)
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        pids.append(pid)
    statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses)
    assert tree_files(out) in trees
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_held_lock_names_its_holder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    where = check(str(out), "render", "t")
    with publish._locked(where, "render", "prod", 1.0):
        def work() -> None:
            try:
                publish.publish_tree({"a": "b"}, where, "render", "t", wait=0.3)
            except OutputRefused as refused:
                assert f"pid {os.getppid()} (render of stack prod)" in str(refused)
                os._exit(7)

        status = _in_child(work)
    assert os.WEXITSTATUS(status) == 7
    assert not out.exists()
