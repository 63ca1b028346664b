"""Regenerate tests/golden/<name>/ from tests/golden/stacks/<name>.yaml; review with `git diff tests/golden`.

Usage: python scripts/regen_golden.py [NAME ...]   (default: every stack under tests/golden/stacks, and findings)

`findings` is tests/golden/findings.json: the `validate --format json` answers of the broken
designs in tests/test_findings_golden.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cluster.artifacts import render_tree  # noqa: E402
from cluster.pipeline import Valid, validate  # noqa: E402
from cluster.publish import check, publish_tree  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"


def regenerate(name: str) -> int:
    result = validate(str(GOLDEN / "stacks" / f"{name}.yaml"))
    if not isinstance(result, Valid) or not result.ok:
        print(f"{name}: fails validation, not regenerated", file=sys.stderr)
        return 1
    files = render_tree(result.spec, result.topology)
    publish_tree(files, check(str(GOLDEN / name), "render", name), "render", name)
    print(f"{name}: {len(files)} files written to tests/golden/{name}/")
    return 0


def regenerate_findings() -> int:
    from tests.test_findings_golden import GOLDEN as FINDINGS
    from tests.test_findings_golden import answers

    found = answers()
    FINDINGS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"findings: {len(found)} designs' answers written to tests/golden/findings.json")
    return 0


def main(names: list[str]) -> int:
    names = names or [*sorted(path.stem for path in (GOLDEN / "stacks").glob("*.yaml")), "findings"]
    return max((regenerate_findings() if name == "findings" else regenerate(name) for name in names), default=0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
