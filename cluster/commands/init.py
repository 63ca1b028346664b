"""`init NAME [--from EXAMPLE] [--dir DIR]`: start a stack file, stacks/Pulumi.NAME.yaml.

Without --from, a commented starter (cluster.starter); with it, one of the example stacks the
package holds, its cluster renamed. Pulumi.yaml and __main__.py are written when the folder has
none, so `pulumi up` runs there; a file that exists is never overwritten (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from cluster import starter
from cluster.cli import VERBS
from cluster.findings import printable


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("init", help=VERBS["init"])
    parser.add_argument("name", help="the stack and cluster name (a DNS label): writes stacks/Pulumi.NAME.yaml")
    parser.add_argument("--from", dest="example", metavar="EXAMPLE",
                        help="start from an example stack: " + ", ".join(starter.examples()))
    parser.add_argument("--dir", default=".", help="the project folder (default the working directory)")


def run(args: argparse.Namespace) -> int:
    if not starter.NAME.fullmatch(args.name):
        print(printable(f"init: {args.name!r} is not a DNS label: use lower-case letters, digits and '-' "
                        "(at most 63, not starting or ending with '-')"), file=sys.stderr)
        return 2
    known = starter.examples()
    if args.example is not None and args.example not in known:
        print(printable(f"init: no example {args.example!r}; the examples:"), file=sys.stderr)
        for example in known.values():
            print(f"  {example.name:<14} {example.about}", file=sys.stderr)
        return 2
    folder = Path(args.dir)
    stack = folder / "stacks" / f"Pulumi.{args.name}.yaml"
    text = starter.starter(args.name) if args.example is None else starter.from_example(args.name, known[args.example])
    created: list[Path] = []
    try:
        stack.parent.mkdir(parents=True, exist_ok=True)
        _create(stack, text)
        created.append(stack)
        for name, content in (("Pulumi.yaml", starter.PULUMI_YAML), ("__main__.py", starter.MAIN_PY)):
            with contextlib.suppress(FileExistsError):  # the project's own: kept as it is
                _create(folder / name, content)
                created.append(folder / name)
    except FileExistsError:
        print(printable(f"init: {stack} exists; nothing written (edit it, or choose another name)"), file=sys.stderr)
        return 2
    except OSError as error:  # a folder that cannot be written: no project left half made
        for path in created:
            path.unlink(missing_ok=True)
        print(printable(f"init: cannot write {error.filename or folder}: {error.strerror or error}; nothing written; "
                        "choose another --dir"), file=sys.stderr)
        return 2
    described = "a commented starter" if args.example is None else f"from the example {args.example}"
    written = [f"{stack} ({described})", *(str(path) for path in created[1:])]
    print(printable(f"init: wrote {', '.join(written)}"))
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(printable(f"next: {where}gpu-cluster validate {args.name}, then render (on premises) or plan; "
                    f"`pulumi stack init {args.name} && pulumi up` deploys it"))
    return 0


def _create(path: Path, text: str) -> None:
    """Write a new file; FileExistsError when `path` exists (never overwritten)."""
    with path.open("x", encoding="utf-8") as stream:
        stream.write(text)
