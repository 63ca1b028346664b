"""`diff OLD NEW [--format text|json] [--shown N] [--patch]`: a change from one design to another as
the work a person does (cluster.change).

Exit 0 when the change is safe to make switch by switch (no stage breaks a rule: see
cluster.change.transition) and NEW passes its own validation, 1 when a stage breaks a rule or NEW
fails validation, 2 for a stack that cannot be read or fails SCHEMA, or a cloud stack (its fabric
is the provider's: no cables of ours to move).
"""

from __future__ import annotations

import argparse
import json
import sys

from cluster.change.compare import compare
from cluster.change.keep import keeping
from cluster.change.report import to_dict, to_lines
from cluster.change.transition import safe, stages
from cluster.cli import VERBS
from cluster.pipeline import Valid, validate
from cluster.report import to_text


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("diff", help=VERBS["diff"])
    parser.add_argument("old", help="the design as it is: a stack name (dev -> stacks/Pulumi.dev.yaml) or a path")
    parser.add_argument("new", help="the design as it will be: a stack name or a path")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--shown", type=int, default=20, metavar="N",
                        help="lines shown per list in text (0: all; the JSON has everything)")
    parser.add_argument("--patch", action="store_true", help="text: add the unified diff of every changed switch file")


def _built(stack: str) -> Valid | None:
    result = validate(stack)
    if not isinstance(result, Valid) or result.schema_failed:
        print(to_text(result), file=sys.stderr)
        return None
    if result.spec.fabric is None or result.topology.fabric_plan is None:
        print(f"diff: {result.stack} runs on {result.spec.target}: its GPU fabric is the provider's, so there are "
              "no cables or switch configs of ours to change; compare on-prem stacks", file=sys.stderr)
        return None
    return result


def run(args: argparse.Namespace) -> int:
    if args.shown < 0:
        print("python -m cluster diff: error: --shown takes 0 (all) or more", file=sys.stderr)
        return 2
    old, new = _built(args.old), _built(args.new)
    if old is None or new is None:
        return 2
    change = compare(old, new)
    found = stages(old, change)
    code = 0 if safe(found) and new.ok else 1
    kept = keeping(old, new, change)
    if args.format == "json":
        print(json.dumps(to_dict(old.stack, new.stack, change, found, code, kept), indent=2))
    else:
        print(to_lines(old.stack, new.stack, change, found, code, args.shown, args.patch, kept))
        if not new.ok:
            print(f"  {new.stack} fails its own validation: `validate {args.new}` lists why")
    return code
