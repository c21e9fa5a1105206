"""Plain-text tables with aligned columns, for terminal reports."""

from __future__ import annotations

from typing import Sequence


def render_table(headers: Sequence[str], rows: Sequence[Sequence], align: str | None = None,
                 indent: str = "", gap: int = 2) -> str:
    """Render rows under headers, each column as wide as its widest cell.

    Parameters
    ----------
    align : str, optional
        One letter per column, ``"l"`` or ``"r"``; default: first column left, the rest right.

    Examples
    --------
    >>> print(render_table(["Class", "GT"], [["Car", 111], ["Bus", 3]]))
    Class   GT
    Car    111
    Bus      3
    """
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    columns = len(headers)
    align = align or ("l" + "r" * (columns - 1))
    widths = [max(len(r[i]) if i < len(r) else 0 for r in cells) for i in range(columns)]
    lines = []
    for row in cells:
        parts = []
        for i in range(columns):
            text = row[i] if i < len(row) else ""
            parts.append(text.ljust(widths[i]) if align[i] == "l" else text.rjust(widths[i]))
        lines.append((indent + (" " * gap).join(parts)).rstrip())
    return "\n".join(lines)
