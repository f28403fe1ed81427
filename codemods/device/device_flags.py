"""argparse flags that choose the device (``parser.add_argument("--device", default="cuda",
choices=["cpu", "cuda"])``): their default and choices are device strings, ported with the
others ("cuda" -> "xla").  A "cpu" default beside a "cuda" (or "xla") choice is where the model
trains unless the run names another device (or a function of the project sets it): reported at
the default (XLA111), where the module that reads the flag cannot say so (it only receives
``args``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import is_device_name
from codemods.engine.nodes import (
    call_args,
    dotted,
    flag_dest,
    is_cuda_device_string,
    method_name,
    string_value,
)

if TYPE_CHECKING:
    from codemods.project.module_summary import Found

# The name a script's parsed arguments go by where no ``parse_args()`` of the file binds them
# (``def main(args): ...``).
_USUAL_NAMESPACE = "args"


@dataclass(frozen=True)
class DeviceFlag:
    dest: str  # the attribute of the parsed arguments (``device``)
    default: cst.BaseExpression | None
    choices: tuple[cst.BaseExpression, ...]

    @property
    def cpu_beside_accelerator(self) -> bool:
        """The default is "cpu" and a choice is a CUDA device (or "xla", once ported): an
        accelerator is meant, the CPU is what runs."""
        return string_value(self.default) == "cpu" and any(
            is_cuda_device_string(c) or string_value(c) == "xla" for c in self.choices
        )

    @property
    def ported(self) -> bool:
        """Its default or a choice is a CUDA device string, which the port makes "xla"."""
        return any(is_cuda_device_string(value) for value in (self.default, *self.choices) if value is not None)


def device_flag(call: cst.Call) -> DeviceFlag | None:
    """The device flag ``call`` (an ``add_argument``) adds, if it adds one."""
    dest = flag_dest(call)  # (``"-d", "--device"``: the long option names it, as argparse does)
    if dest is None or not is_device_name(dest):
        return None
    keywords = call_args(call)[1]
    default, choices = keywords.get("default"), keywords.get("choices")
    listed = choices.value if choices is not None else None
    return DeviceFlag(
        dest,
        default.value if default is not None else None,
        tuple(e.value for e in listed.elements) if isinstance(listed, (cst.List, cst.Tuple)) else (),
    )


def parsed_names(node: cst.Assign) -> list[str]:
    """The names an assignment binds to parsed arguments: ``args = parser.parse_args()``,
    ``args, rest = parser.parse_known_args()``."""
    if type(node.value) is not cst.Call or method_name(node.value) not in ("parse_args", "parse_known_args"):
        return []
    names = []
    for target in node.targets:
        bound = target.target
        if type(bound) in (cst.Tuple, cst.List) and bound.elements:  # type: ignore[attr-defined]  # narrowed by type(...) in (...)
            bound = bound.elements[0].value  # type: ignore[attr-defined]  # as above
        if (name := dotted(bound)) is not None:
            names.append(name)
    return names


def flags_of_project(
    dests: set[str],
    parsed: set[str],
    namespace_calls: Mapping[str, list[str | None]],
    origin: Callable[[str], Found | None],
) -> tuple[set[str], set[str]]:
    """The ported device flags a file tests, and the names of the namespaces that hold them:
    its own parser's, and those a function of another module of the project returns
    (``args = get_args()``, whose parser defaults ``--device`` to "cuda": the port of that
    module makes it "xla").  A module this run does not convert keeps its default."""
    dests, namespaces = set(dests), set(parsed)
    for name, funcs in namespace_calls.items():
        found = origin(funcs[0]) if len(funcs) == 1 and funcs[0] is not None else None
        if found is None or found.summary is None or found.summary.pending:
            continue
        for dest, default in found.summary.flag_defaults:
            text = default.strip("'\"")
            if text == "cuda" or text.startswith("cuda:"):
                dests.add(dest)
                namespaces.add(name)
    return dests, namespaces


def compared_strings(
    comparison: cst.Comparison, dests: Collection[str], namespaces: Collection[str]
) -> list[cst.SimpleString] | None:
    """The CUDA strings a test of a ported device flag compares it with (``args.device ==
    'cuda'``, ``args.device in ['cpu', 'cuda', 'mps']``, ``not in``, ``!=``): the port makes them
    "xla" with the flag's default and choices, or the flag's new default fails the test (an
    ``assert``) or takes another branch.  None: not a test of such a flag."""
    if len(comparison.comparisons) != 1:
        return None
    other = comparison.comparisons[0].comparator
    name = dotted(comparison.left)
    if name is None or name.count(".") != 1:
        name, other = dotted(other), comparison.left
        if (
            name is None
            or name.count(".") != 1
            or type(comparison.comparisons[0].operator)
            not in (
                cst.Equal,
                cst.NotEqual,
            )
        ):
            return None
    namespace, _, dest = name.partition(".")
    if dest not in dests or (namespace not in namespaces and namespace != _USUAL_NAMESPACE):
        return None
    values = [e.value for e in other.elements] if type(other) in (cst.List, cst.Tuple, cst.Set) else [other]  # type: ignore[attr-defined]  # narrowed by type(...) in (...)
    return [value for value in values if type(value) is cst.SimpleString and is_cuda_device_string(value)]


def unfollowed(comparison: cst.Comparison) -> bool:
    """A membership test (``in``, ``not in``) against what is not a literal collection or
    string (``args.device in DEVICES``): the tool cannot port its values."""
    test = comparison.comparisons[0]
    return type(test.operator) in (cst.In, cst.NotIn) and type(test.comparator) not in (
        cst.List,
        cst.Tuple,
        cst.Set,
        cst.SimpleString,
    )
