"""CLI verbs, one module each: `add_parser(verbs)` registers it, `run(args)` returns the exit code."""
