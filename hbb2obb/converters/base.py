"""The converter interface and registry."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from hbb2obb.errors import UsageError


@dataclass(frozen=True)
class ConversionReport:
    """What one conversion of a folder did.

    Attributes
    ----------
    files : int
        Label files written.
    boxes : int
        Boxes written.
    fallbacks : int
        Boxes for which no usable result was found and the HBB itself was emitted.
    seconds : float
        Wall time of the conversion.
    ok : bool
        ``False`` when the conversion failed as a whole (e.g. an external command exited non-zero).
    error : str
        Why it failed (the tail of an external command's stderr); empty when ``ok``.
    """

    files: int = 0
    boxes: int = 0
    fallbacks: int = 0
    seconds: float = 0.0
    ok: bool = True
    error: str = ""
    details: dict = field(default_factory=dict)


class Converter(ABC):
    """Converts a folder of HBB prompts (YOLO-HBB) into a folder of OBBs (YOLO-OBB, pixels).

    Subclasses set :attr:`name` and :attr:`parameters` (name -> default value) and implement
    :meth:`convert`. Parameters not listed are rejected by :meth:`check_parameters` before any
    work starts, so a typo in a sweep grid fails fast.
    """

    name: str = ""
    parameters: dict = {}
    needs_images: bool = False
    #: Values a sweep uses for a standard axis (``imgsz``, ``scale_factor``,
    #: ``opening_kernel_percentage``) that the user leaves out; an axis absent here takes the
    #: reference tool's defaults, which suit converters that wrap it (``command``).
    default_axes: dict = {}

    def check_parameters(self, params: dict) -> dict:
        """The full parameter set (defaults filled in); unknown names are a usage error."""
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            raise UsageError(
                f"converter {self.name!r} has no parameter {', '.join(map(repr, unknown))}; "
                f"its parameters: {', '.join(self.parameters) or 'none'}"
            )
        return {**self.parameters, **params}

    @abstractmethod
    def convert(
        self,
        hbb_dir: Path,
        out_dir: Path,
        params: dict,
        *,
        img_source: Optional[Path] = None,
        progress: Optional[Callable[[int], None]] = None,
    ) -> ConversionReport:
        """Convert every ``hbb_dir/*.txt`` into ``out_dir/<same name>.txt``."""


_REGISTRY: dict[str, type] = {}
# Modules that define built-in converters; imported on first lookup so that importing the
# package stays cheap and a converter's heavy dependencies load only when it is used.
_BUILTIN_MODULES = ("hbb2obb.converters.identity", "hbb2obb.converters.command", "hbb2obb.converters.image.converter")


def register(cls: type) -> type:
    """Class decorator: make a converter available by its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real missing dependency, not an absent built-in
                raise


def available_converters() -> list[str]:
    """Names of the registered converters."""
    _load_builtins()
    return sorted(_REGISTRY)


def get_converter(name: str, **options) -> Converter:
    """An instance of the converter called ``name``; unknown names are a usage error."""
    _load_builtins()
    if name not in _REGISTRY:
        raise UsageError(f"unknown converter {name!r}; available: {', '.join(sorted(_REGISTRY)) or 'none'}")
    return _REGISTRY[name](**options)
