"""Where a device value ends on an XLA host after the port (the answer of
device/values.py and of the obligations), and where a value that may be any of several
ends; and a value bound to a name (or returned), which device/values.py follows."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class Where:
    """Where a device value ends on an XLA host after the port: ``on_xla`` True (the XLA
    device on every path), False (it can end off it: ``why`` says where, ``node`` is where
    the chain breaks in this file, None when it breaks in another one), None (not followed:
    a parameter, a value read at run time); ``elsewhere``: it comes from a module of the
    project that this run does not read or convert (``module``: that module's path, when
    it is read); ``library``: it comes from a package the tool does not follow
    (apis.unfollowed_package: ``mmengine.device.get_device()``), that package's name, ``node``
    the call or name that reads it (``why`` names it)."""

    on_xla: bool | None
    why: str = ""
    node: cst.CSTNode | None = None
    elsewhere: bool = False
    module: str = ""
    library: str = ""


XLA = Where(True)
UNKNOWN = Where(None)


def either(found: list[Where]) -> Where:
    """Where a value that may be any of ``found`` ends.  The alternatives left are chosen by
    conditions not known after the port (a ``--no-cuda`` flag, a config value): where one of
    them is the XLA device, the script runs there unless its user asks otherwise; off XLA
    if only other devices are left."""
    if any(w.on_xla for w in found):
        return XLA
    off = next((w for w in found if w.on_xla is False), None)
    if off is not None and all(w.on_xla is False for w in found):
        return off
    rest = off if off is not None and off.node is None else UNKNOWN
    return next((w for w in found if w.elsewhere), next((w for w in found if w.library), rest))


@dataclass(frozen=True)
class Binding:
    """A value bound to a name (or returned), with the conditions it is under, by id:
    (the ``if``, whether in its body)."""

    value: cst.BaseExpression | None  # None: bound to what the tool does not follow (``a, b = f()``)
    scope: str
    conds: tuple[tuple[cst.If, bool], ...]
