"""Obligation (3) across functions and modules (for device/obligations.py): the callables
whose loop over a loader handed in feeds a module handed in batches it does not move (this
file's, and in the summary for other files), and the calls that hand such a callable a model on
the XLA device with a DataLoader: the loader is wrapped where it is handed, or the call is
reported (XLA116).  Apart from the walk that records the loops, moves and calls it reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.facts import LoaderWrap
from codemods.device.obligation_records import Loop, Move, code, positional
from codemods.device.project_callables import ProjectCallables
from codemods.device.rules import xla116_batch_off_xla as xla116
from codemods.device.rules.xla116_batch_off_xla import BATCH_OFF_XLA
from codemods.device.values import DeviceValueAnalysis
from codemods.engine.nodes import arg_value, dotted, walk
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import UnmovedFeeding

if TYPE_CHECKING:
    from codemods.facts import Facts


class HandedLoaders(ProjectCallables):
    """The part of ObligationAnalysis that follows loaders and models handed to callables."""

    facts: Facts
    moves: dict[str, list[Move]]
    loops: list[Loop]
    bound_from: dict[tuple[str, str], list[tuple[cst.Call, int]]]

    @property
    def values(self) -> DeviceValueAnalysis:
        return self.walk.analysis(DeviceValueAnalysis)

    def _bound_key(self, name: str, scope: str | None = None) -> tuple[str, str]:
        return ("" if "." in name else self.walk.qualname if scope is None else scope), name

    def _unmoved_feeding(self) -> None:
        """Callables whose loop over a loader handed in feeds batches it does not move to a
        module handed in: a caller that hands them a model on the XLA device must hand them
        batches there too (for this file's calls and, in the summary, other files').  A
        function that hands both of its parameters on to such a callable (``train_one_epoch``
        calling ``val_one_epoch(model, val_loader)``) is one too."""
        for loop in self.loops:
            params = positional(loop.scope, self.params.get(loop.scope, []))
            loader = next((name for name in loop.iterated if name in params), None)
            if loader is None:
                continue
            for _, model, batch in loop.forwards:
                unmoved = tuple(dict.fromkeys(n for n in batch if n not in loop.moved and n not in loop.through))
                if model in params and model != loader and unmoved:
                    only_iterated = self._only_iterated(loop.scope, loader)
                    host_reads = tuple(dict.fromkeys(read for name, read in loop.host_reads if name not in loop.moved))
                    self.part.unmoved_feeding.add(
                        UnmovedFeeding(
                            loop.scope,
                            params.index(model),
                            model,
                            params.index(loader),
                            loader,
                            unmoved,
                            only_iterated,
                            host_reads,
                        )
                    )
        grew = True
        while grew:
            grew = False
            for call, callee, _ in self.handed:
                scope = self.handed_in[call]
                params = positional(scope, self.params.get(scope, []))
                for fed in self._fed_by(callee)[0]:
                    module = dotted(arg_value(call, fed.model_index, fed.model) or cst.Name("_"))
                    data = dotted(arg_value(call, fed.loader_index, fed.loader) or cst.Name("_"))
                    if module is None or data is None or module not in params or data not in params or module == data:
                        continue
                    entry = UnmovedFeeding(
                        scope,
                        params.index(module),
                        module,
                        params.index(data),
                        data,
                        fed.unmoved,
                        fed.only_iterated and self._only_iterated(scope, data),
                        fed.host_reads,
                    )
                    if entry not in self.part.unmoved_feeding:
                        self.part.unmoved_feeding.add(entry)
                        grew = True

    def _only_iterated(self, scope: str, loader: str) -> bool:
        """The function only iterates its parameter ``loader``, takes its ``len``, or hands it
        on where a callable only iterates it: a device loader (which has neither ``sampler``
        nor ``dataset``) can stand in for it."""
        function = self.functions.get(scope)
        if function is None:
            return False
        allowed = {
            id(sub)
            for loop in self.loops
            if loop.scope == scope and loader in loop.iterated
            for sub in walk(loop.node.iter)
        }
        for sub in walk(function.body):
            if type(sub) is cst.Call and dotted(sub.func) == "len" and len(sub.args) == 1:
                allowed.add(id(sub.args[0].value))
        for call, callee, _ in self.handed:
            if self.handed_in[call] == scope:
                for fed in self._fed_by(callee)[0]:
                    handed = arg_value(call, fed.loader_index, fed.loader)
                    if fed.only_iterated and handed is not None and dotted(handed) == loader:
                        allowed.add(id(handed))
        return all(id(sub) in allowed for sub in walk(function.body) if type(sub) is cst.Name and sub.value == loader)

    def _handed_loaders(self) -> None:
        """Obligation (3) across functions and modules: a model on the XLA device and a
        DataLoader handed to a callable whose loop feeds the loader's batches to the model
        without moving them.  The loader is wrapped where it is handed (MpDeviceLoader moves
        every tensor of each batch, nested or not, and ends the step); where the callable uses
        the loader otherwise than by iterating it, or the loader is built in the call, the
        finding says so."""
        for call, callee, _ in self.handed:
            entries, where = self._fed_by(callee, pending=True)
            unconverted = where.endswith("which this run does not convert")
            done: set[str] = set()
            handed_in = self.params.get(self.handed_in[call], [])
            for fed in entries:
                model = dotted(arg_value(call, fed.model_index, fed.model) or cst.Name("_"))
                loader = arg_value(call, fed.loader_index, fed.loader)
                loader_param, unmoved, only_iterated = fed.loader, fed.unmoved, fed.only_iterated
                if model in handed_in or dotted(loader or cst.Name("_")) in handed_in:
                    continue  # a parameter handed on: its callers hand the function itself (_unmoved_feeding)
                move = self._xla_move(model) if model is not None else None
                # ``model = FSDP(model, ...)``: torch_xla's FSDP, where the target ports it, puts it there
                sharded = move is None and any(c in self.facts.fsdp.wraps for c in self.built.get(model or "", []))
                # ``model = make_parallel(model)``, a DataParallel (or DDP with device_ids) wrap made
                # elsewhere: on CUDA its forward moved the batches, which it does not do on XLA
                scatter = (
                    self._scattering(model, self.handed_in[call])
                    if move is None and not sharded and model is not None
                    else None
                )
                if (
                    (move is None and not sharded and scatter is None)
                    or loader is None
                    or loader_param in done
                    or not self._data_loader(loader)
                ):
                    continue
                done.add(loader_param)
                feeds = xla116.feeds_unmoved(loader_param, tuple(unmoved), str(model), scatter)
                if unconverted:
                    # a module this run does not convert: the tool changes nothing there, nor the loader
                    (self.part.broken_if_sharded if sharded else self.part.broken).setdefault(
                        call, (BATCH_OFF_XLA, xla116.loader_to_unconverted(code(loader), callee, where, feeds))
                    )
                elif fed.host_reads:
                    # a device loader moves every tensor of each batch: the reads that need one on the CPU would fail
                    (self.part.broken_if_sharded if sharded else self.part.broken).setdefault(
                        call,
                        (
                            BATCH_OFF_XLA,
                            xla116.loader_read_on_host(code(loader), callee, where, feeds, fed.host_reads),
                        ),
                    )
                elif only_iterated and type(loader) in (cst.Name, cst.Attribute):
                    device = dotted(move.device) if move is not None and move.device is not None else None
                    same_scope = move is not None and move.scope == self.handed_in.get(call)
                    self.part.loader_wraps[loader] = LoaderWrap(
                        device if same_scope else None,
                        f"{code(loader)} -> {{new}}: `{callee}` ({where}) {feeds}; the device loader moves each "
                        "batch and ends the step",
                        sharded,
                    )
                else:
                    (self.part.broken_if_sharded if sharded else self.part.broken).setdefault(
                        call,
                        (
                            BATCH_OFF_XLA,
                            xla116.loader_not_wrapped(
                                code(loader), callee, where, feeds, loader_param, built=only_iterated
                            ),
                        ),
                    )

    def _scattering(self, name: str, scope: str) -> str | None:
        """What moved the batches of the model ``name`` on CUDA, as a finding says it, where the
        last call it is bound to is a function (of this file or of a converted module of the
        project) returning it wrapped in nn.DataParallel or in DDP with device_ids; None otherwise."""
        bound = self.bound_from.get(self._bound_key(name, scope))
        if not bound or (func := dotted(bound[-1][0].func)) is None:
            return None
        call, index = bound[-1]
        wrapper = self.facts.distributed.scattering_returns.get((func, index))
        where = "in this file"
        if wrapper is None:
            found = self.walk.analysis(ProjectAnalysis).origin(func)
            summary = found.summary if found is not None else None
            if (
                found is None
                or summary is None
                or summary.pending  # (its moves stay on CUDA terms: XLA003 names it)
                or (wrapper := summary.scattering_return(found.name, index)) is None
            ):
                return None
            where = f"in {summary.path}"
        return f"`{func}()` ({where}) returns it wrapped in {wrapper}"

    def _xla_move(self, name: str) -> Move | None:
        """A move of ``name`` that runs on an XLA host after the port and goes to the XLA device."""
        values = self.values
        for move in self.moves.get(name, []):
            if any(
                values.truth(cond.test, move.scope, cond in self.facts.device.ifs) is (not in_body)
                or (flag := values.flag_in(cond.test, move.scope)) is not None
                and flag.elsewhere
                for cond, in_body in move.conds
            ):
                continue
            if move.device is None or values.where(move.device, move.scope).on_xla:
                return move
        return None

    def _data_loader(self, loader: cst.BaseExpression) -> bool:
        """A DataLoader (yielding CPU tensors), not a device loader."""
        if type(loader) is cst.Call:
            return self.walk.resolve(loader.func) in apis.DATA_LOADERS
        return dotted(loader) in self.facts.loaders.names
