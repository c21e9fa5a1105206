"""HBB-to-OBB converters behind one small interface, so a sweep can drive any of them.

A converter has a name, the parameters it accepts (with defaults), and one operation: convert
every HBB label file of a folder into YOLO-OBB files in another folder. Built-in converters
register themselves with :func:`register`; :func:`get_converter` finds them by name.
"""

from hbb2obb.converters.base import ConversionReport, Converter, available_converters, get_converter, register

__all__ = ["ConversionReport", "Converter", "available_converters", "get_converter", "register"]
