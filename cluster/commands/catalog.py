"""`catalog [gpus|servers|switches|instances] [--format text|json]`: what a stack-file key can name."""

from __future__ import annotations

import argparse
import json

from cluster.catalog import load_catalog
from cluster.cli import VERBS
from cluster.formats.catalog_keys import KINDS, as_json, as_text


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("catalog", help=VERBS["catalog"])
    parser.add_argument("kind", nargs="?", choices=list(KINDS),
                        help="one catalog (default all): gpus (node_pools[].gpu), servers (node_pools[].server), "
                             "switches (a leaf's, spine's or core's switch), instances (node_pools[].instance_type)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: one line per entry; json: every entry whole, with its sources")


def run(args: argparse.Namespace) -> int:
    names = [args.kind] if args.kind else list(KINDS)
    catalog = load_catalog()
    print(json.dumps(as_json(catalog, names), indent=2) if args.format == "json" else as_text(catalog, names))
    return 0
