"""Where the reference tool (hbb2obb 1.12.0) is installed for the tests that run it, and how to run its converter.

Looked for in ``$HBB2OBB_REFERENCE_PYTHON``, else ``.bench/refvenv`` in this checkout (made by
``make bench``), else ``/work/refvenv``; ``REFERENCE_PYTHON`` is ``None`` when there is none, and
those tests skip.
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CANDIDATES = [os.environ.get("HBB2OBB_REFERENCE_PYTHON", ""), ROOT / ".bench" / "refvenv" / "bin" / "python",
               "/work/refvenv/bin/python"]
REFERENCE_PYTHON = next((Path(p) for p in _CANDIDATES if p and Path(p).is_file()), None)

# The reference imports torch and psutil at start-up and checks for updates; none is needed to convert.
CONVERT_DRIVER = (
    "import sys, types\n"
    "for name in ('torch', 'psutil'):\n"
    "    sys.modules.setdefault(name, types.ModuleType(name))\n"
    "import hbb2obb.cli as cli\n"
    "cli.check_for_updates_once = lambda *a, **k: None\n"
    "sys.argv[0] = 'hbb2obb-convert'\n"
    "cli.main_hbb2obb_convert()\n"
)
