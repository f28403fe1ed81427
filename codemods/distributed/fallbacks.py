"""Process groups started in a ``try`` whose ``except`` goes on without one (a set-up helper
that falls back to one process), in a script that wraps its model in DistributedDataParallel
unconditionally: if that ``except`` runs, DDP raises "Default process group has not been
initialized".  The port makes the ``try`` start the xla process group in every process
torch_xla.launch starts (one process too), so the fallback only runs where something in the
``try`` still fails on XLA: an environment variable read by subscript that the port leaves
(torch_xla.launch sets no torchrun variables: KeyError)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.distributed.launch import INIT_PROCESS_GROUP
from codemods.engine.nodes import walk
from codemods.engine.walk import Analysis, Walk, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts

_ENVIRON = "os.environ"


class FallbackAnalysis(Analysis):
    facts: Facts

    name = "fallbacks"
    fills = "distributed"
    conclude_reads = ("launch", "ddp", "entry", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.tries: list[cst.Try] = []
        self.unguarded_ddp: list[cst.Call] = []  # DDP constructions under no condition

    def visit_Try(self, node: cst.Try) -> None:
        self.tries.append(node)

    @calls_of(apis.DDP_CLASSES)
    def _ddp(self, node: cst.Call) -> None:
        if not self.walk.conds:
            self.unguarded_ddp.append(node)

    def conclude(self) -> None:
        self._env_fallbacks()
        if not self.unguarded_ddp:
            return
        ported = {id(sub) for read in self.part.runtime_reads for sub in walk(read)}
        for node in self.tries:
            if not any(self._starts_group(sub) for sub in walk(node.body)):
                continue
            failing = next(
                (
                    sub
                    for sub in walk(node.body)
                    if type(sub) is cst.Subscript and id(sub) not in ported and self.walk.resolve(sub.value) == _ENVIRON
                ),
                None,
            )
            if failing is None:
                continue
            for handler in node.handlers:
                if not self._ends_or_starts_group(handler):
                    self.part.group_fallbacks[handler] = (failing, self.unguarded_ddp[0])

    def _env_fallbacks(self) -> None:
        """The process groups of ``env_fallback_groups``: started with the env:// rendezvous in a
        ``try`` one of whose handlers goes on without a group, in a script the port does not start
        with the XLA launcher (it runs as ``python train.py`` or under torchrun), nor any file of
        the run that imports it (module summaries: torch_xla.launch sets no RANK, WORLD_SIZE or
        MASTER_ADDR, so in each of its processes env:// would raise and the ``except`` would train
        alone on all the data; those groups keep the xla:// port)."""
        if self.part.multi_process and self.part.style in ("spawn", "launched", "main"):
            return
        groups = [
            sub
            for node in self.tries
            if not all(self._ends_or_starts_group(handler) for handler in node.handlers)
            for sub in walk(node.body)
            if type(sub) is cst.Call
            and self._starts_group(sub)
            and sub in self.part.process_groups
            and _env_rendezvous(sub)
        ]
        found = self.facts.project.context.launched_importer(self.part.requested) if groups else None
        if found == ("", None) and self.facts.entry.main_guard is not None:
            found = None  # a script run itself, which no file of the run imports
        for group in groups if found is None or found[1] is None else ():
            if found is None:
                self.part.env_fallback_groups.add(group)
            else:
                self.part.env_fallback_unknown[group] = found[0]

    def _starts_group(self, node: cst.CSTNode) -> bool:
        return type(node) is cst.Call and self.walk.resolve(node.func) == INIT_PROCESS_GROUP

    def _ends_or_starts_group(self, handler: cst.ExceptHandler) -> bool:
        """The handler re-raises, ends the process, or starts a process group itself."""
        for sub in walk(handler.body):
            if self._starts_group(sub):
                return True
            if isinstance(sub, cst.BaseSmallStatement) and self.walk.ends_the_process(sub):
                return True
        return False


def _env_rendezvous(call: cst.Call) -> bool:
    """``init_process_group`` meets through the env:// rendezvous (the default), which reads the
    rank and world size from the launcher's environment: no init_method but env://, no store, rank
    or world size of its own."""
    from codemods.engine.nodes import string_value

    named = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
    if {"store", "rank", "world_size"} & named.keys() or len(call.args) > len(named) + 1:
        return False
    init = named.get("init_method")
    return init is None or string_value(init.value) == "env://"
