#!/usr/bin/env python3
"""Run the reference tool's own ``hbb2obb-eval`` or ``hbb2obb-analyze`` (hbb2obb 1.12.0) for the benchmark.

Run it with the interpreter of the virtual environment the reference is installed in (it
shares our import name, so it cannot live in ours)::

    REFVENV/bin/python benchmarks/reference_driver.py eval GT PRED -nb [--json-out FILE]
    REFVENV/bin/python benchmarks/reference_driver.py analyze GT PRED -nb

The reference package imports ``torch`` (and ``psutil``) at import time although its evaluator
and analysis never use them; where they are not installed, an empty module of that name is
registered in ``sys.modules`` first, and the driver says so on stderr. Everything else is the
reference's console function, unchanged: its argument parsing, evaluation and printed report.
``--json-out FILE`` also writes the metric dict its ``evaluate_obb`` returned (for the
benchmark's agreement check). The update check against the package index is turned off.
"""

from __future__ import annotations

import json
import os
import sys
import types


def _stand_ins() -> list:
    missing = []
    for name in ("torch", "psutil"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
            missing.append(name)
    return missing


def _plain(value):
    """numpy scalars and arrays as JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("eval", "analyze"):
        print(__doc__, file=sys.stderr)
        return 2
    command, args = sys.argv[1], sys.argv[2:]
    json_out = None
    if "--json-out" in args:
        at = args.index("--json-out")
        json_out, args = args[at + 1], args[:at] + args[at + 2:]
    os.environ["HBB2OBB_DISABLE_UPDATE_CHECK"] = "1"
    stubbed = _stand_ins()
    if stubbed:
        print(f"reference_driver: registered empty module(s) {', '.join(stubbed)} (imported, never used, "
              "by the reference package)", file=sys.stderr)
    import hbb2obb.evaluator as evaluator
    from hbb2obb import cli

    captured = []
    original = evaluator.evaluate_obb

    def keep(*positional, **keywords):  # the console function imports it from the module when it runs
        result = original(*positional, **keywords)
        captured.append(result)
        return result

    evaluator.evaluate_obb = keep
    sys.argv = [f"hbb2obb-{command}"] + args
    (cli.main_hbb2obb_eval if command == "eval" else cli.main_hbb2obb_analyze)()
    if json_out is not None:
        if not captured:
            print("reference_driver: evaluate_obb was not called, no metric dict to write", file=sys.stderr)
            return 1
        with open(json_out, "w", encoding="utf-8") as handle:
            json.dump(captured[0], handle, default=_plain)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
