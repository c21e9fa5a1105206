"""YAML the user gives (label maps, golden files, sweep and benchmark files), read without surprises.

PyYAML's safe loaders build what aliases point at once and share it, so a 400-byte file whose
aliases nest ten deep (an "alias bomb") loads in an instant, and then hangs whatever walks it:
10**10 values to compare, print or copy. A file whose aliases would expand beyond
:data:`MAX_YAML_VALUES` values is refused before it is built, as is a self-referring alias
(``a: &a [*a]``) and nesting deeper than Python's stack.
"""

from __future__ import annotations

from pathlib import Path

from hbb2obb.errors import InputError

MAX_YAML_VALUES = 1_000_000
"""Most values (scalars, lists and mappings, aliases expanded) a YAML file may hold: far above a
label map or a golden file (tens of thousands), far below what hangs a walk of it."""


def expanded_size(node, limit: int = MAX_YAML_VALUES) -> int:
    """How many values a composed YAML node holds with every alias expanded, up to just past ``limit``.

    A node met again through an alias counts again (what a walk of the loaded data meets), but
    is measured once. A node that holds itself counts as more than ``limit``.

    Examples
    --------
    >>> import yaml
    >>> expanded_size(yaml.compose("a: &x [1, 2]\\nb: [*x, *x]"))
    13
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack = [(node, False)]
    while stack:
        current, children_done = stack.pop()
        key = id(current)
        if key in sizes and not children_done:
            continue
        children = _children(current)
        if not children_done:
            if key in open_nodes:
                return limit + 1  # a node inside itself: endless when walked
            open_nodes.add(key)
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        if any(id(child) not in sizes for child in children):
            return limit + 1  # a child still open: the node holds itself
        open_nodes.discard(key)
        sizes[key] = min(limit + 1, 1 + sum(sizes[id(child)] for child in children))
    return sizes[id(node)]


def _children(node) -> list:
    value = node.value
    if isinstance(value, list):
        return [item for entry in value for item in (entry if isinstance(entry, tuple) else (entry,))]
    return []


def refuse_alias_bomb(text: str, loader, path, what: str) -> None:
    """:class:`InputError` when ``text``'s aliases expand beyond :data:`MAX_YAML_VALUES` values.

    Text without both an anchor (``&``) and an alias (``*``) has no alias to expand and is not
    composed twice. YAML errors are left to the real load, which words them.
    """
    if "&" not in text or "*" not in text:
        return
    import yaml

    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return
    except RecursionError:
        raise too_deep(path, what) from None
    if node is not None and expanded_size(node) > MAX_YAML_VALUES:
        raise InputError(f"{Path(path)}: {what} expands to more than {MAX_YAML_VALUES:,} values through YAML "
                         "aliases (an alias bomb, or an alias inside itself); refused")


def too_deep(path, what: str) -> InputError:
    """The error for a file nested deeper than can be read (JSON or YAML)."""
    return InputError(f"{Path(path)}: {what} is nested too deeply to read")
