"""`python -m cluster VERB STACK ...`: one module per verb under cluster/commands/."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import keyword
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from cluster import __version__
from cluster.findings import printable

# Verb modules, in help order, with the line `--help` shows for each. Each module has
# add_parser(verbs) and run(args) -> exit code, and is imported only when its verb runs (or its
# own --help is asked for): `validate` never loads the renderers, the report or the estimator.
VERBS = {
    "init": "start a stack file: commented, or from an example (and Pulumi.yaml when absent)",
    "catalog": "list what a stack-file key can name: GPUs, servers, switches, instance types",
    "validate": "check a stack against every rule",
    "render": "write switch configs and host scripts for an on-prem stack",
    "plan": "list the resources `pulumi up` would register, offline",
    "verify": "compare what the devices report (LLDP, ibnetdiscover) with the design",
    "import": "write a stack file that reproduces a built fabric, from what its devices report",
    "diff": "a change from one design to another as work: switches, cables to add, remove and move, config diffs",
    "export": "write Slurm topology.conf, Kubernetes labels and Kueue objects, nccl/<pool>.env, cabling.csv and "
              "bom.csv",
    "report": "write one self-contained HTML report with a topology diagram",
    "estimate": "predict collective times and a training step's communication share",
    "whatif": "N-1 analysis: the fabric after losing one switch or cable",
    "lab": "boot the GPU fabric in FRR in network namespaces, check it against the design, fail parts of it",
}


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with a message, never a traceback."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def module_of(verb: str) -> str:
    """The module of a verb: `import` is a Python keyword, so its module is `import_`."""
    name = verb.replace("-", "_")
    return f"cluster.commands.{name}_" if keyword.iskeyword(name) else f"cluster.commands.{name}"


def parser(verb: str | None = None, prog: str = "python -m cluster") -> argparse.ArgumentParser:
    """The CLI's parser: the full arguments of `verb` (all verbs when None), the others by name."""
    root = _Parser(prog=prog, description="Validate, render and plan GPU cluster designs.")
    root.add_argument("--version", action="version", version=f"gpu-cluster {__version__}")
    verbs = root.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    for name, summary in VERBS.items():
        if verb is None or name == verb:
            importlib.import_module(module_of(name)).add_parser(verbs)
        else:
            verbs.add_parser(name, help=summary)
    return root


def _verb_of(argv: Sequence[str]) -> str | None:
    """The verb asked for (the first argument that is not an option), if it is one."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in VERBS else None


def main(argv: Sequence[str] | None = None, prog: str = "python -m cluster") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = _verb_of(argv)
    args = parser(verb or "", prog).parse_args(argv)  # "": no verb module is imported for a usage error
    module = importlib.import_module(module_of(args.verb))
    try:
        code: int = module.run(args)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        # Each verb reports its own input and --out errors; one without a file name is the output
        # itself (`validate > /dev/full`, a closed terminal).
        if error.filename is None:
            _drop_stdout()
            print(f"{args.verb}: cannot write the output: {error.strerror or error}", file=sys.stderr)
        else:
            print(printable(f"{args.verb}: cannot use {error.filename}: {error.strerror or error}"), file=sys.stderr)
        return 2
    except Exception as error:  # a defect of ours: say so in one line, never a traceback
        if os.environ.get("GPU_CLUSTER_DEBUG"):
            raise
        print(printable(f"{args.verb}: internal error ({type(error).__name__}: {str(error)[:300]}); this is a defect "
                        "of gpu-cluster, please report it with the stack file (GPU_CLUSTER_DEBUG=1 shows the traceback)"),
              file=sys.stderr)
        return 2
    return code


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again at exit."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def entry() -> None:
    """The `gpu-cluster` console script (pyproject.toml)."""
    raise SystemExit(main(prog="gpu-cluster"))


if __name__ == "__main__":
    raise SystemExit(main())
