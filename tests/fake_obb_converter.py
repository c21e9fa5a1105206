"""A stand-in for an external HBB-to-OBB converter, driven by the ``command`` converter in tests.

``python fake_obb_converter.py HBB_DIR OUT_DIR --sf SHORT [LONG] [--imgsz N] [--fail_at SF]
[--sleep SECONDS]``: every ``class xc yc w h`` line (pixels) becomes an axis-aligned OBB whose
short side grows by ``2 * SHORT`` and long side by ``2 * LONG`` of their lengths (the identity
converter's rule), its corners rounded to a grid of ``3840 / imgsz`` pixels (a coarser image,
a coarser box). ``--fail_at`` makes it exit 3 with a message on stderr at that scale factor;
``--sleep`` makes it slow. Standard library only, like any tool the toolkit knows nothing of.
"""

import argparse
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("hbb_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--sf", type=float, nargs="+", required=True)
    parser.add_argument("--imgsz", type=int, default=3840)
    parser.add_argument("--fail_at", type=float)
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()
    short, long = (args.sf * 2)[:2]
    if args.fail_at is not None and abs(short - args.fail_at) < 1e-12:
        print("loading model weights", file=sys.stderr)
        print(f"RuntimeError: out of memory at scale factor {short}", file=sys.stderr)
        return 3
    time.sleep(args.sleep)
    step = 3840 / args.imgsz
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(args.hbb_dir.glob("*.txt")):
        lines = []
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            cls, xc, yc, w, h = line.split()[:5]
            xc, yc, w, h = float(xc), float(yc), float(w), float(h)
            fw, fh = (short, long) if w < h else (long, short)
            x1, x2 = xc - w / 2 - w * fw, xc + w / 2 + w * fw
            y1, y2 = yc - h / 2 - h * fh, yc + h / 2 + h * fh
            x1, y1, x2, y2 = (round(v / step) * step for v in (x1, y1, x2, y2))
            lines.append(f"{cls} {x1} {y1} {x2} {y1} {x2} {y2} {x1} {y2}")
        (args.out_dir / path.name).write_text("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
