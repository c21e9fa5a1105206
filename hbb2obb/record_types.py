"""Records: :func:`dataclasses.dataclass` for the classes every command imports, at a fraction of its start-up cost.

A frozen dataclass compiles six methods from source when its class statement runs
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``), each one
an ``exec``: about 1.5 ms a class on the development VM, 26 ms for the 17 classes a plain
``hbb2obb-eval`` imports, more than a tenth of a 10-box run. Only ``__init__`` depends on the
fields in a way worth compiling (its signature, defaults and the stores a call makes); the other
five do the same thing for every class and are plain functions here, closed over the class's
field names. :func:`record` therefore compiles one method a class.

What a record keeps of a dataclass: it *is* one underneath (``dataclasses.fields``,
``replace``, ``asdict`` and ``is_dataclass`` work), its ``__init__`` has the dataclass's
signature (defaults, ``field(default_factory=...)``, ``field(init=False)``, ``__post_init__``),
and ``repr``, equality, hashing and frozenness behave as the dataclass's with the same options
(``field(repr=False, compare=False, hash=...)`` honoured; assignment to a frozen record raises
:class:`dataclasses.FrozenInstanceError`). What it does not do: ``InitVar``, ``ClassVar``,
``kw_only``, ``order``, ``slots``, and a class that writes one of the six methods itself, all
refused with ``TypeError`` when the class is made; ``__dataclass_params__`` describes the bare
dataclass underneath, not the options given here; its ``repr`` has no guard for a record that
contains itself.
"""

from __future__ import annotations

import dataclasses

__all__ = ["record"]

_WRITTEN_HERE = ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__")


class _Factory:
    """The default of a parameter whose field has a ``default_factory``: call it when nothing was passed."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"  # what ``inspect.signature`` of a dataclass shows for such a parameter


_FACTORY = _Factory()


def record(cls=None, /, *, frozen: bool = True, eq: bool = True):
    """Make ``cls`` a dataclass whose only compiled method is ``__init__``.

    Parameters
    ----------
    cls : type, optional
        The class, when used as a bare decorator (``@record``).
    frozen : bool, default True
        Assigning to or deleting a field of an instance raises
        :class:`dataclasses.FrozenInstanceError` (``__post_init__`` may set fields with
        ``object.__setattr__``, as in a frozen dataclass).
    eq : bool, default True
        Instances compare equal when they are of the same class and their compared fields are
        equal as tuples; a frozen record with ``eq`` hashes that tuple, a mutable one is unhashable.

    Returns
    -------
    type or callable
        The class, or a decorator when called with options only.

    Raises
    ------
    TypeError
        When the class needs what :func:`record` does not do (see the module's text), or its
        defaults are out of order.

    Examples
    --------
    >>> @record
    ... class Span:
    ...     start: int
    ...     stop: int = 0
    >>> Span(1, 4)
    Span(start=1, stop=4)
    >>> Span(1) == Span(1, 0), hash(Span(1)) == hash(Span(1, 0))
    (True, True)
    >>> Span(1).start = 2
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'start'
    >>> dataclasses.replace(Span(1, 4), stop=9)
    Span(start=1, stop=9)
    """

    def wrap(cls):
        return _make_record(cls, frozen=frozen, eq=eq)

    return wrap if cls is None else wrap(cls)


def _make_record(cls, *, frozen: bool, eq: bool):
    written = [name for name in _WRITTEN_HERE if name in cls.__dict__]
    if written:
        raise TypeError(f"{cls.__qualname__} defines {', '.join(written)}: a record writes these itself")
    # No method is generated: every option that would compile one is off.
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__):
        raise TypeError(f"{cls.__qualname__}: a record has no ClassVar or InitVar fields")
    if any(field.kw_only is True for field in fields):
        raise TypeError(f"{cls.__qualname__}: a record has no keyword-only fields")
    cls.__init__ = _init_method(cls, fields)
    names = frozenset(field.name for field in fields)
    _attach(cls, "__repr__", _repr_method(tuple(field.name for field in fields if field.repr)))
    if eq:
        compared = tuple(field.name for field in fields if field.compare)
        _attach(cls, "__eq__", _eq_method(compared))
        if frozen:
            hashed = tuple(field.name for field in fields if (field.compare if field.hash is None else field.hash))
            _attach(cls, "__hash__", _hash_method(hashed))
        else:
            cls.__hash__ = None  # as a mutable dataclass with eq: equal values, no stable hash
    if frozen:
        _attach(cls, "__setattr__", _frozen_setattr(cls, names))
        _attach(cls, "__delattr__", _frozen_delattr(cls, names))
    return cls


def _attach(cls, name: str, method) -> None:
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    method.__module__ = cls.__module__
    setattr(cls, name, method)


def _init_method(cls, fields):
    """The one compiled method: the parameters and stores of the dataclass's ``__init__``."""
    namespace = {"__name__": cls.__module__, "_record_store": object.__setattr__, "_RECORD_FACTORY": _FACTORY}
    parameters, body = [], []
    own = "_record_self" if any(field.name == "self" for field in fields) else "self"  # as dataclass names it
    for field in fields:
        default = f"_record_default_{field.name}"
        factory = f"_record_factory_{field.name}"
        if field.default is not dataclasses.MISSING:
            namespace[default] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            namespace[factory] = field.default_factory
        if field.init:
            if field.default is not dataclasses.MISSING:
                parameters.append(f"{field.name}={default}")
                value = field.name
            elif field.default_factory is not dataclasses.MISSING:
                parameters.append(f"{field.name}=_RECORD_FACTORY")
                value = f"{factory}() if {field.name} is _RECORD_FACTORY else {field.name}"
            else:
                parameters.append(field.name)
                value = field.name
        elif field.default is not dataclasses.MISSING:
            value = default
        elif field.default_factory is not dataclasses.MISSING:
            value = f"{factory}()"
        else:
            continue  # init=False and no default: left unset, as a dataclass does
        body.append(f"    _record_store({own}, {field.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append(f"    {own}.__post_init__()")
    source = f"def __init__({own}, {', '.join(parameters)}):\n" + ("\n".join(body) or "    pass")
    try:
        exec(source, namespace)  # noqa: S102 - the source is built above from field names only
    except SyntaxError as exc:  # a field without a default after one with: what dataclass says
        raise TypeError(f"{cls.__qualname__}: a field without a default follows one with a default ({exc.msg})") from None
    method = namespace["__init__"]
    method.__qualname__ = f"{cls.__qualname__}.__init__"
    return method


def _repr_method(shown: tuple):
    def method(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    return method


def _eq_method(compared: tuple):
    def method(self, other):
        if other.__class__ is self.__class__:
            return (tuple(getattr(self, name) for name in compared)
                    == tuple(getattr(other, name) for name in compared))
        return NotImplemented

    return method


def _hash_method(hashed: tuple):
    def method(self) -> int:
        return hash(tuple(getattr(self, name) for name in hashed))

    return method


def _frozen_setattr(cls, names: frozenset):
    def method(self, name, value):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return method


def _frozen_delattr(cls, names: frozenset):
    def method(self, name):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return method
