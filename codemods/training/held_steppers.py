"""Optimizers and schedulers that a class keeps on its instances (``self.opt_g =
torch.optim.Adam(...)`` in a method of ``GAN``, of this file or another module of the
project), stepped on an instance (``gan.opt_g.step()``): the training analysis knows those
as it knows a name bound to one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from codemods.project.module_summary import Found


def held_steppers(
    stepped: Iterable[str],
    instances: Mapping[str, str],
    held: set[tuple[str, str, str]],
    origin: Callable[[str], Found | None],
) -> Iterator[tuple[str, str]]:
    """The stepped names (``gan.opt_g``, ``self.gan.opt_g``) whose instance a class built (``instances``: names
    of this file -> the file's class; else ``origin``, the project callable behind a name)
    that keeps an optimizer or a scheduler on that attribute (``held``: the file's (class,
    attribute, kind); another module's, its summary's), each with its kind."""
    for name in dict.fromkeys(stepped):
        head, _, attribute = name.rpartition(".")  # ``gan.opt_g``; ``self.gan.opt_g``: ``self.gan`` holds the instance
        if not head or "[" in name:
            continue
        if head in instances:
            owner, steppers = instances[head], held
        elif (built := origin(name)) is not None and built.summary is not None and "." in built.name:
            owner, attribute = built.name.rsplit(".", 1)
            steppers = set(built.summary.held_steppers)
        else:
            continue
        yield from ((name, kind) for cls, attr, kind in steppers if (cls, attr) == (owner, attribute))
