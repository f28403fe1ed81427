"""The API inventory of each target release (tests/data/api_inventory/, written by
scripts/api_inventory.py), and what the tool's output asks of it.

``Inventory.problems(uses)`` says which of the uses a release cannot run: a torch or
torch_xla name it lacks, arguments its signature refuses, a device type, backend,
rendezvous scheme, torch.compile backend or reduce type it has not, an XLA device passed
where the parameter is no device.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

import libcst as cst

from codemods.analyse import analyse
from codemods.engine.nodes import walk
from codemods.targets import TARGETS
from tests.support.paths import DATA

INVENTORIES = DATA / "api_inventory"
ROOTS = ("torch", "torch_xla")


@dataclass(frozen=True)
class Use:
    """One use of a torch or torch_xla name in code: a reference, or a call with its
    arguments (how many positional, which keywords, the string literals by argument
    position or keyword, which positional arguments are the XLA device)."""

    name: str
    call: bool = False
    positional: int = 0
    keywords: tuple[str, ...] = ()
    strings: tuple[tuple[str, str], ...] = ()  # (position "0" or keyword, value)
    devices: tuple[int, ...] = ()  # positional arguments that are the XLA device

    def __str__(self) -> str:
        if not self.call:
            return self.name
        args = [f"<{n}>" for n in range(self.positional)] + [f"{k}=" for k in self.keywords]
        strings = ", ".join(f"{k}: {v!r}" for k, v in self.strings)
        return f"{self.name}({', '.join(args)})" + (f" [{strings}]" if strings else "")


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def uses_in(code: str | bytes) -> Counter[Use]:
    """Every use of a torch or torch_xla name (calls with their arguments), and every
    module or name imported from them."""
    module = cst.parse_module(code)
    table = analyse(module).imports.table
    devices = {api.qualified_name for target in TARGETS.values() for api in [target.api("device")]}
    found: Counter[Use] = Counter()
    callees = set()
    for node in walk(module):
        if isinstance(node, cst.Call):
            name = table.resolve(node.func)
            if name is None or name.split(".")[0] not in ROOTS:
                continue
            callees.add(id(node.func))
            positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
            keywords = tuple(sorted(arg.keyword.value for arg in node.args if arg.keyword is not None))
            strings = [(str(n), value) for n, arg in enumerate(positional) if (value := _string(arg.value))]
            strings += [
                (arg.keyword.value, value)
                for arg in node.args
                if arg.keyword is not None and (value := _string(arg.value))
            ]
            device_args = tuple(
                n
                for n, arg in enumerate(positional)
                if isinstance(arg.value, cst.Call) and table.resolve(arg.value.func) in devices
            )
            found[Use(name, True, len(positional), keywords, tuple(sorted(strings)), device_args)] += 1
        elif isinstance(node, cst.Import):
            for alias in node.names:
                found[Use(cst.Module([]).code_for_node(alias.name))] += 1
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            source = cst.Module([]).code_for_node(node.module)
            if source.split(".")[0] in ROOTS and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    found[Use(f"{source}.{cst.Module([]).code_for_node(alias.name)}")] += 1
    for node in walk(module):
        if isinstance(node, (cst.Attribute, cst.Name)) and id(node) not in callees:
            name = table.resolve(node)
            if name is not None and name.split(".")[0] in ROOTS:
                found[Use(name)] += 1
    return Counter({use: n for use, n in found.items() if use.name.split(".")[0] in ROOTS})


def written_uses(before: str | bytes, after: str | bytes) -> set[Use]:
    """The uses the tool wrote: those the output has more often than the input."""
    return set(uses_in(after) - uses_in(before))


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # "positional_only", "either", "keyword_only", "var_positional", "var_keyword"
    default: bool


def parameters(signature: str) -> list[Parameter] | None:
    """``(a, b=, /, c, *args, d=, **kw)`` read back; None for ``?`` (not known)."""
    if signature == "?":
        return None
    items = [item.strip() for item in signature.strip("()").split(",") if item.strip()]
    found = []
    kind = "either"
    if "/" in items:
        found = [
            Parameter(item.rstrip("="), "positional_only", item.endswith("=")) for item in items[: items.index("/")]
        ]
        items = items[items.index("/") + 1 :]
    for item in items:
        if item == "*":
            kind = "keyword_only"
        elif item.startswith("**"):
            found.append(Parameter(item[2:], "var_keyword", False))
        elif item.startswith("*"):
            found.append(Parameter(item[1:], "var_positional", False))
            kind = "keyword_only"
        else:
            found.append(Parameter(item.rstrip("="), kind, item.endswith("=")))
    return found


def bind(params: list[Parameter], use: Use) -> tuple[dict[str, str], str | None]:
    """Argument (position or keyword) -> parameter name, or what the signature refuses."""
    positional = [p for p in params if p.kind in ("positional_only", "either")]
    bound: dict[str, str] = {}
    for n in range(use.positional):
        if n < len(positional):
            bound[str(n)] = positional[n].name
        elif not any(p.kind == "var_positional" for p in params):
            return bound, f"takes at most {len(positional)} positional arguments"
    by_keyword = {p.name for p in params if p.kind in ("either", "keyword_only")}
    for keyword in use.keywords:
        if keyword in bound.values():
            return bound, f"{keyword!r} given twice"
        if keyword in by_keyword:
            bound[keyword] = keyword
        elif not any(p.kind == "var_keyword" for p in params):
            return bound, f"has no parameter {keyword!r}"
        else:
            bound[keyword] = keyword
    for p in params:
        if not p.default and p.kind in ("positional_only", "either", "keyword_only") and p.name not in bound.values():
            return bound, f"needs {p.name!r}"
    return bound, None


@dataclass(frozen=True)
class Inventory:
    target: str
    data: dict[str, object]

    @property
    def modules(self) -> dict[str, dict[str, str]]:
        return self.data["modules"]  # type: ignore[return-value]

    def listed(self, key: str) -> list[str]:
        value = self.data[key]
        assert isinstance(value, list)
        return value

    def entry(self, name: str) -> str | None:
        """What ``name`` is in this release (None: it has no such name, or its module is
        not in the inventory: then scripts/api_inventory.py's MODULES needs it)."""
        if name in self.modules or name in ROOTS:
            return "module"
        module, _, attr = name.rpartition(".")
        while module:
            if module in self.modules:
                names = self.modules[module]
                if attr in names:
                    return names[attr]
                head = attr.split(".")[0]
                return "value" if names.get(head) == "value" else None
            module, _, head = module.rpartition(".")
            attr = f"{head}.{attr}"
        return None

    def covers(self, name: str) -> bool:
        """Whether the inventory lists the module that ``name`` would be in: not only
        ``torch`` or ``torch_xla`` for a name under a submodule of theirs."""
        modules = [*self.modules, *self.listed("missing_modules")]
        module = max((m for m in modules if name == m or name.startswith(m + ".")), key=len, default=None)
        if module is None:
            return False
        rest = name[len(module) + 1 :]
        return module not in ROOTS or self.modules.get(module, {}).get(rest.split(".")[0]) != "module"

    def problems(self, use: Use) -> list[str]:
        what = self.entry(use.name)
        if what is None:
            if not self.covers(use.name):
                return [f"{use.name}: its module is not in the inventory (scripts/api_inventory.py MODULES)"]
            return [f"{use}: torch/torch_xla {self.target} has no {use.name}"]
        if not use.call:
            return []
        signature = what.partition(" ")[2] if what.startswith(("def ", "class ")) else "?"
        params = parameters(signature)
        bound: dict[str, str] = {}
        found = []
        if params is not None:
            bound, refused = bind(params, use)
            if refused:
                found.append(f"{use}: {use.name}{signature} {refused}")
            for n in use.devices:
                if "device" not in bound.get(str(n), "device"):
                    found.append(f"{use}: the XLA device lands in parameter {bound[str(n)]!r}")
        strings = dict(use.strings)
        found += self._string_problems(use, {bound.get(k, k): v for k, v in strings.items()}, strings)
        return found

    def _string_problems(self, use: Use, by_parameter: dict[str, str], by_argument: dict[str, str]) -> list[str]:
        found = []
        device_type = by_parameter.get("device_type")
        if (
            device_type is not None
            and use.name.endswith("autocast")
            and device_type not in self.listed("autocast_device_types")
        ):
            found.append(f"{use}: autocast has no device type {device_type!r} here")
        if use.name == "torch.distributed.init_process_group":
            backend = by_parameter.get("backend", by_argument.get("0"))
            if backend is not None and backend not in self.listed("distributed_backends"):
                found.append(f"{use}: no distributed backend {backend!r}")
            init_method = by_parameter.get("init_method")
            if init_method is not None and init_method.partition("://")[0] not in self.listed("rendezvous_schemes"):
                found.append(f"{use}: no rendezvous handler for {init_method!r}")
        reduce_type = by_parameter.get("reduce_type")
        if use.name == "torch_xla.core.xla_model.all_reduce" and reduce_type not in (
            None,
            *self.listed("reduce_types"),
        ):
            found.append(f"{use}: xm.all_reduce has no reduce type {reduce_type!r}")
        if (
            use.name == "torch.compile"
            and "backend" in by_parameter
            and by_parameter["backend"] not in self.listed("compile_backends")
        ):
            found.append(f"{use}: no torch.compile backend {by_parameter['backend']!r}")
        return found


@cache
def inventory(target: str) -> Inventory:
    version = TARGETS[target].torch_xla_version.replace(".", "_")
    return Inventory(target, json.loads((INVENTORIES / f"torch_xla_{version}.json").read_text()))


# Module aliases that messages and rule pages write (``xm.mark_step()``), from the target tables.
MESSAGE_ALIASES = {
    **{api.alias: api.module for target in TARGETS.values() for api in target.apis.values() if api.alias},
    "dist": "torch.distributed",
}
_PREFIXES = "|".join(sorted({*ROOTS, *MESSAGE_ALIASES}, key=len, reverse=True))
_NAMED = re.compile(rf"(?<![\w.])((?:{_PREFIXES})(?:\.\w+)+)(\((?:[^()]|\([^()]*\))*\))?")
_PJRT_DEVICE = re.compile(r"PJRT_DEVICE=(\w+)")
# The schemes of torch.distributed's init methods (a message's "xla://", "env://"; not https://).
_RENDEZVOUS = re.compile(r"(?<![\w/])(xla|pjrt|env|tcp|file)://")


_NEGATION = re.compile(r"\b(no|nor|not|without)\b[^;:]*$")
_REMOVED = re.compile(r"^[\w.,() ]*\bwhich torch_xla [\d.]+ removed")


@cache
def _names_used(code: str) -> frozenset[str]:
    return frozenset(use.name for use in uses_in(code))


def named_uses(text: str, quoting: str | bytes = "") -> set[Use]:
    """The torch / torch_xla APIs a message or page names as advice: ``torch_xla.sync()``,
    ``xr.world_size()``, ``torch.autocast('xla')`` (a call read with its arguments).  A name
    that ``quoting`` (the script the message is about) spells as the message does, or
    uses (through its imports), is a quote of the script, and a name after "no", "nor", "not" or "without" in its clause is
    said to be absent (so is one followed by "which torch_xla N removed"): neither is advice."""
    quoted = quoting.decode("utf-8", "replace") if isinstance(quoting, bytes) else quoting
    used = _names_used(quoted) if quoted else frozenset()
    found = set()
    prelude = "".join(f"import {module} as {alias}\n" for alias, module in MESSAGE_ALIASES.items())
    prelude += "import torch\nimport torch_xla\n"
    for match in _NAMED.finditer(text):
        name, call = match.group(1), match.group(2) or ""
        if (
            (quoted and name in quoted)
            or any(u == name or u.startswith(name + ".") for u in used)
            or _NEGATION.search(text[max(0, match.start() - 60) : match.start()])
            or _REMOVED.match(text[match.end() :])
        ):
            continue
        try:
            uses = uses_in(prelude + name + call + "\n")
        except cst.ParserSyntaxError:
            uses = uses_in(prelude + name + "\n")
        found |= {use for use in uses if use.name not in MESSAGE_ALIASES.values() or use.call}
    return found


def pjrt_devices_named(text: str) -> set[str]:
    return set(_PJRT_DEVICE.findall(text))


def rendezvous_schemes_named(text: str) -> set[str]:
    return set(_RENDEZVOUS.findall(text))
