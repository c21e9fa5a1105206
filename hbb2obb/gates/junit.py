"""``--junit FILE``: the gates of a run as JUnit XML, the test report CI systems show natively.

One test case per gate: each ``--require`` bound (overall or of one class) and each field the
``--expect`` golden check counts. A failing gate carries its measured value, its bound and its
class, in the failure's message (one line, what a CI page lists) and its text. The file is
written atomically, once the run has its outcomes.
"""

from __future__ import annotations

import platform
import xml.etree.ElementTree as ElementTree  # writing only: what is parsed is defusedxml's (hbb2obb.io.voc)
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from hbb2obb.gates.golden import GoldenComparison
from hbb2obb.gates.require import Gate
from hbb2obb.io.labelmap import class_name


@dataclass(frozen=True)
class GateCase:
    """One test case of the report: a gate and how it went.

    Attributes
    ----------
    group : str
        ``"require"`` or ``"expect"`` (the test case's class name, after the program).
    name : str
        The gate as the user wrote it, or the golden field.
    passed : bool
    message : str
        One line on a failure: measured value, bound and class; empty when passed.
    details : str
        The failure's text: one ``name: value`` line each.
    skipped : str
        Why the case was not counted (a field ``--expect_ignore_extra`` leaves out); empty otherwise.
    """

    group: str
    name: str
    passed: bool
    message: str = ""
    details: str = ""
    skipped: str = ""


@dataclass
class JUnitReport:
    """The test cases of one run, and the numbers shown beside them as the suite's properties."""

    program: str
    cases: list[GateCase] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def _number(value: float) -> str:
    return f"{value:.6g}"


def require_cases(outcomes, label_map: Optional[dict]) -> list[GateCase]:
    """The ``--require`` gates' cases from :func:`~hbb2obb.gates.require.gate_outcomes`."""
    cases = []
    for gate, passed, value, note in outcomes:
        gate: Gate
        scope = "all classes" if gate.class_id is None else class_name(label_map or {}, gate.class_id)
        message = "" if passed else (f"{gate.key} = {_number(value)}, bound {gate.op} {_number(gate.bound)} "
                                     f"({scope})" + (f": {note}" if note else ""))
        details = f"measured: {_number(value)}\nbound: {gate.op} {_number(gate.bound)}\nclass: {scope}\n"
        cases.append(GateCase("require", gate.text, passed, message, details))
    return cases


def expect_cases(comparison: GoldenComparison) -> list[GateCase]:
    """The ``--expect`` check's cases: one per field of the golden file or the run, in the golden file's order."""
    cases = [GateCase("expect", key, True, details=f"golden file: {comparison.source}\n")
             for key in comparison.matching]
    tolerance = f" (tolerance {_number(comparison.tolerance)})" if comparison.tolerance else ""
    for key, where, expected, actual in comparison.different:
        message = f"{where}: measured {actual!r}, golden {expected!r}{tolerance}"
        cases.append(GateCase("expect", key, False, message,
                              f"measured: {actual!r}\nbound: {expected!r}{tolerance}\nfield: {where}\n"
                              f"golden file: {comparison.source}\n"))
    for key, expected in comparison.missing:
        cases.append(GateCase("expect", key, False, f"{key}: not in this run (golden {expected!r})",
                              f"measured: (absent)\nbound: {expected!r}\ngolden file: {comparison.source}\n"))
    for key, actual in comparison.unexpected:
        if comparison.ignore_extra:
            cases.append(GateCase("expect", key, True, skipped="not in the golden file (--expect_ignore_extra)"))
        else:
            cases.append(GateCase("expect", key, False, f"{key}: not in the golden file (measured {actual!r})",
                                  f"measured: {actual!r}\nbound: (absent)\ngolden file: {comparison.source}\n"))
    return cases


def render_junit(report: JUnitReport, now: Optional[datetime] = None) -> str:
    """The report as JUnit XML text (the ``testsuites`` root, one ``testsuite``)."""
    cases = report.cases
    failures = sum(1 for case in cases if not case.passed and not case.skipped)
    skipped = sum(1 for case in cases if case.skipped)
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": str(skipped),
              "time": f"{report.seconds:.3f}"}
    root = ElementTree.Element("testsuites", name=report.program, **counts)
    suite = ElementTree.SubElement(root, "testsuite", name=report.program, timestamp=stamp,
                                   hostname=platform.node() or "localhost", **counts)
    if report.properties:
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in report.properties.items():
            ElementTree.SubElement(properties, "property", name=name, value=value)
    for case in cases:
        element = ElementTree.SubElement(suite, "testcase", classname=f"{report.program}.{case.group}",
                                         name=case.name, time="0")
        if case.skipped:
            ElementTree.SubElement(element, "skipped", message=case.skipped)
        elif not case.passed:
            failure = ElementTree.SubElement(element, "failure", message=case.message, type="gate")
            failure.text = case.details
        elif case.details:
            ElementTree.SubElement(element, "system-out").text = case.details
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, report: JUnitReport) -> None:
    """Write the report to ``path`` atomically (the old file, if any, stays whole until then)."""
    from hbb2obb.errors import InputError
    from hbb2obb.io.atomic import write_text_atomic

    try:
        write_text_atomic(path, render_junit(report))
    except OSError as exc:
        raise InputError(f"--junit {path}: cannot write ({exc.strerror or exc})") from None
