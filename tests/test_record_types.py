"""A record behaves as the dataclass with the same options: each case is built both ways and compared."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import field
from typing import Optional

import numpy as np
import pytest

from hbb2obb.record_types import record

# Each case: the class body's namespace (annotations in order, defaults) and the record options.
# Built into a record and into the equivalent dataclass, from the same namespace.
CASES = {
    "no fields": ({}, {}),
    "one field": ({"a": "int"}, {}),
    "defaults": ({"a": "int", "b": ("str", "x"), "c": ("Optional[float]", None)}, {}),
    "factories": ({"a": "int", "items": ("list", field(default_factory=list)),
                   "names": ("set", field(default_factory=set))}, {"frozen": False}),
    "repr and compare off": ({"a": "int", "hidden": ("int", field(default=0, repr=False, compare=False))}, {}),
    "hash off for one field": ({"a": "int", "b": ("int", field(default=0, hash=False))}, {}),
    "not an init parameter": ({"a": "int", "made": ("list", field(default_factory=list, init=False)),
                               "fixed": ("int", field(default=7, init=False))}, {}),
    "mutable": ({"a": "int", "b": ("int", 0)}, {"frozen": False}),
    "no equality": ({"a": "int"}, {"eq": False}),
    "mutable, no equality": ({"a": "int"}, {"frozen": False, "eq": False}),
}


def _namespace(spec: dict) -> dict:
    namespace = {"__annotations__": {}, "__module__": __name__, "__qualname__": "Case"}
    for name, value in spec.items():
        if isinstance(value, tuple):
            namespace["__annotations__"][name], namespace[name] = value
        else:
            namespace["__annotations__"][name] = value
    return namespace


def _both(spec: dict, options: dict):
    made = record(**options)(type("Case", (), _namespace(spec)))
    dataclass_options = {"frozen": options.get("frozen", True), "eq": options.get("eq", True)}
    reference = dataclasses.dataclass(**dataclass_options)(type("Case", (), _namespace(spec)))
    return made, reference


def _arguments(cls) -> tuple:
    """Values for the parameters without a default: distinct per parameter, so a swapped store shows."""
    required = [p for p in inspect.signature(cls).parameters.values() if p.default is inspect.Parameter.empty]
    return tuple(10 + i for i, _ in enumerate(required))


def _hash_or_error(instance):
    try:
        return hash(instance)
    except TypeError as exc:  # a field holds a list: unhashable in both
        return str(exc)


@record
class Pickled:
    """Module level, so pickle finds the class (worker processes receive records this way)."""

    values: np.ndarray
    names: list = field(default_factory=list)
    note: Optional[str] = None


def test_a_record_survives_pickle_and_stays_frozen():
    made = Pickled(np.arange(3.0), ["a"], "n")
    copied = pickle.loads(pickle.dumps(made))
    assert np.array_equal(copied.values, made.values) and copied.names == ["a"] and copied.note == "n"
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.note = "changed"


def _state(instance) -> dict:
    return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance) if hasattr(instance, f.name)}


@pytest.mark.parametrize("name", CASES)
def test_a_record_behaves_as_the_dataclass_with_its_options(name):
    spec, options = CASES[name]
    made, reference = _both(spec, options)
    assert dataclasses.is_dataclass(made)
    assert [(f.name, f.init, f.repr, f.compare) for f in dataclasses.fields(made)] == \
        [(f.name, f.init, f.repr, f.compare) for f in dataclasses.fields(reference)]
    # the same parameters, kinds and defaults (a factory's parameter shows "<factory>" in both)
    assert [(p.name, p.kind, repr(p.default)) for p in inspect.signature(made.__init__).parameters.values()] == \
        [(p.name, p.kind, repr(p.default)) for p in inspect.signature(reference.__init__).parameters.values()]
    arguments = _arguments(reference)
    ours, theirs = made(*arguments), reference(*arguments)
    assert _state(ours) == _state(theirs)
    assert repr(ours) == repr(theirs)
    assert (ours == made(*arguments)) == (theirs == reference(*arguments))
    assert (ours == object()) == (theirs == object())
    assert (made.__hash__ is None) == (reference.__hash__ is None)
    if made.__hash__ is not None and options.get("eq", True):
        assert _hash_or_error(ours) == _hash_or_error(theirs) == _hash_or_error(made(*arguments))  # the same tuple
    frozen = options.get("frozen", True)
    for instance in (ours, theirs):
        if frozen:
            with pytest.raises(dataclasses.FrozenInstanceError):
                instance.anything = 1
            if spec:
                with pytest.raises(dataclasses.FrozenInstanceError):
                    delattr(instance, next(iter(spec)))
        else:
            instance.anything = 1
            assert instance.anything == 1
    assert _state(copy.deepcopy(ours)) == _state(ours)


def test_a_default_factory_gives_a_fresh_value_each_time_and_a_passed_value_wins():
    made, _ = _both(*CASES["factories"])
    first, second = made(1), made(2)
    first.items.append("x")
    assert second.items == [] and first.items == ["x"]
    given = ["kept"]
    assert made(3, given).items is given


def test_post_init_runs_after_the_fields_are_stored_and_may_set_frozen_fields():
    @record
    class Validated:
        values: np.ndarray
        total: Optional[float] = None

        def __post_init__(self):
            object.__setattr__(self, "values", np.asarray(self.values, dtype=float))
            if self.values.ndim != 1:
                raise ValueError("values must be 1-D")
            object.__setattr__(self, "total", float(self.values.sum()))

    made = Validated([1, 2, 3])
    assert made.values.dtype == np.float64 and made.total == 6.0
    with pytest.raises(ValueError, match="1-D"):
        Validated([[1]])
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.total = 0.0


def test_replace_and_asdict_work_as_on_a_dataclass():
    made, reference = _both(*CASES["defaults"])
    assert dataclasses.asdict(dataclasses.replace(made(1), b="y")) == dataclasses.asdict(
        dataclasses.replace(reference(1), b="y")) == {"a": 1, "b": "y", "c": None}
    with pytest.raises(TypeError):
        dataclasses.replace(made(1), nope=2)


def test_equality_needs_the_same_class():
    @record
    class Left:
        a: int

    @record
    class Right:
        a: int

    assert Left(1) != Right(1)
    assert Left(1) == Left(1) and Left(1) != Left(2)


def test_a_subclass_of_a_frozen_record_is_frozen_too():
    @record
    class Base:
        a: int

    class Child(Base):
        pass

    with pytest.raises(dataclasses.FrozenInstanceError):
        Child(1).a = 2


def test_calling_with_wrong_arguments_fails_as_a_dataclass_does():
    made, reference = _both(*CASES["defaults"])
    for cls in (made, reference):
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, "b", None, "one too many")
        with pytest.raises(TypeError):
            cls(1, d=4)


@pytest.mark.parametrize("body, message", [
    ("def __eq__(self, other):\n        return True", "defines __eq__"),
    ("def __repr__(self):\n        return ''", "defines __repr__"),
    ("b: int = 0\n    c: int", "without a default follows"),
    ("b: ClassVar[int] = 0", "ClassVar or InitVar"),
    ("b: dataclasses.InitVar[int] = 0", "ClassVar or InitVar"),
    ("b: int = field(default=0, kw_only=True)", "keyword-only"),
])
def test_unsupported_classes_raise_type_error(body, message):
    source = f"from typing import ClassVar\n@record\nclass Refused:\n    a: int\n    {body}\n"
    namespace = {"record": record, "field": field, "dataclasses": dataclasses}
    # compiled without this file's "from __future__ import annotations", so ClassVar is an object
    with pytest.raises(TypeError, match=message):
        exec(compile(source, "<refused>", "exec", dont_inherit=True), namespace)  # noqa: S102 - the test's own


def test_the_package_s_hot_classes_compile_one_method_each(monkeypatch):
    """The point of a record: one ``exec`` a class where the frozen dataclass ran six."""
    import builtins

    calls = []
    real_exec = builtins.exec

    def counting_exec(*args, **kwargs):
        calls.append(args[0])
        return real_exec(*args, **kwargs)

    monkeypatch.setattr(builtins, "exec", counting_exec)

    @record
    class Counted:
        a: int
        b: int = 0

    assert len(calls) == 1 and calls[0].startswith("def __init__")
    calls.clear()

    @dataclasses.dataclass(frozen=True)
    class Compared:
        a: int
        b: int = 0

    assert len(calls) == 6
