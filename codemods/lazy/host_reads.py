"""Host reads: where a training loop reads a device value to the host (``loss.item()``,
``print(loss)``, ``float(t)``, ``if loss > best:``), which runs the pending graph right
there, an extra execution per step; the logging statements whose reads can move into
``xm.add_step_closure``.

An evaluation loop that reads a value every iteration needs no barrier, unless it
carries device state across iterations (an RNN's hidden state): the read materializes
only what it reads, and the carried graph keeps growing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import children, dotted, method_name, names_in, receiver, walk
from codemods.engine.walk import Analysis, Walk
from codemods.lazy.expression_kinds import READ_BUILTINS, READ_METHODS, is_logging, reads_to_host
from codemods.lazy.facts import HostRead, ReadKind, StepClosure
from codemods.lazy.flow import FlowAnalysis
from codemods.lazy.sites import Scope, Site

if TYPE_CHECKING:
    from codemods.facts import Facts

ACCUMULATING_METHODS = frozenset({"append", "extend", "add", "update"})


class HostReadAnalysis(Analysis):
    """Reads of device values to the host (from the flow's device values)."""

    facts: Facts

    name = "host_reads"
    reads = ("lazy_flow", "huggingface", "lightning", "training")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.host_reads
        self.flow = walk.analysis(FlowAnalysis)
        # Every read of a device value to the host (in any loop), by node.
        self.found: dict[cst.CSTNode, Site[cst.BaseExpression]] = {}
        # Small statements right before the process ends (``print(...); sys.exit(1)``):
        # what they read is read once, and a step closure made there would never run.
        self.before_exit: set[cst.BaseSmallStatement] = set()

    @property
    def reading_loops(self) -> set[cst.CSTNode]:
        """The innermost loops of the reads: each of their iterations runs a graph."""
        return {site.loops[-1] for site in self.found.values() if site.loops}

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        for line, after in zip(node.body, node.body[1:]):
            if (
                type(line) is cst.SimpleStatementLine
                and type(after) is cst.SimpleStatementLine
                and self.walk.ends_the_process(after.body[0])
            ):
                self.before_exit.add(line.body[-1])

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.before_exit.update(
            small for small, after in zip(node.body, node.body[1:]) if self.walk.ends_the_process(after)
        )

    def finish(self) -> None:
        self.part.host_returns.update(
            scope.qualname for scopes in self.flow.host_functions.values() for scope in scopes if scope.qualname
        )
        self.found = self._host_reads()
        self._carried_state(self.found)
        for statement, closure in self.part.step_closures.items():
            values = {dotted(self.part.reads[read].value) for read in closure.reads if read in self.part.reads}
            mappings: set[str] = set()
            if changed := changed_in_place_after(
                closure.loop, statement, {v for v in values if v is not None}, mappings
            ):
                self.part.step_closures[statement] = dataclasses.replace(closure, changed_later=frozenset(changed))
            if mappings and closure.blocked is None:
                name = sorted(mappings)[0]
                self.part.step_closures[statement] = dataclasses.replace(
                    closure,
                    blocked=f'`{name}` gets an item by a string key after this line (`{name}["..."] = ...`), so it is '
                    "a mapping, not a tensor: `.detach().clone()` does not copy it, and the closure would see the later "
                    "items",
                )

    def _host_reads(self) -> dict[cst.CSTNode, Site[cst.BaseExpression]]:
        """Every read of a device value to the host (in any loop), by node."""
        reads: dict[cst.CSTNode, Site[cst.BaseExpression]] = {}
        site: Site[cst.BaseExpression]  # of a call, an implicit read, then a test
        values: dict[cst.CSTNode, cst.BaseExpression] = {}
        pieces = _moved_in_pieces(site.node for site in self.flow.sites.calls)
        for site in self.flow.sites.calls:
            call = site.node
            assert type(call) is cst.Call
            method = method_name(call)
            target = receiver(call)
            if method in READ_METHODS and target is not None:
                if type(target) is cst.Call and method_name(target) in READ_METHODS:
                    continue  # t.cpu().numpy(): the read is the .cpu()
                written = dotted(target) or ""
                known_host = written in self.flow.owner(site.scope, written or "x").host
                # ``dataset.train_idx.tolist()`` where the file moves ``dataset.x[nodes].to(device)``: an
                # object whose tensors the file moves to the device piece by piece holds them on the host.
                known_host = known_host or (written.count(".") == 1 and written.split(".")[0] in pieces)
                device = self.flow.is_device(site.scope, target)
                if device or (method in ("item", "tolist") and not known_host):
                    reads[call], values[call] = site, target
            elif (
                type(call.func) is cst.Name
                and call.func.value in READ_BUILTINS
                and self.walk.resolve(call.func) is None
                and len(call.args) == 1
                and self.flow.is_device(site.scope, call.args[0].value)
            ):
                reads[call], values[call] = site, call.args[0].value
        for site in self.flow.sites.implicit:
            if self.flow.is_device(site.scope, site.node) and not reads_to_host(site.node):
                reads[site.node], values[site.node] = site, site.node
        training = self.facts.training.all_loops
        reads = {node: site for node, site in reads.items() if not site.in_lambda}
        for node, site in reads.items():
            loop = next((candidate for candidate in reversed(site.loops) if candidate in training), None)
            if loop is None or site.statement in self.before_exit:
                continue
            kind = self._kind(site)
            self.part.reads[node] = HostRead(kind, values[node], site.conditional)
            if kind == "logging":
                self._step_closure(site, node, loop)
        for site in self.flow.sites.tests:
            if any(loop in training for loop in site.loops) and self._tests_device_value(site.scope, site.node):
                self.part.device_tests.add(site.node)
        return reads

    def _kind(self, site: Site[cst.CSTNode]) -> ReadKind:
        statement = site.statement
        if site.in_test:
            return "control"
        if type(statement) is cst.AugAssign:
            return "accumulation"
        if type(statement) is cst.Expr and type(statement.value) is cst.Call:
            call = statement.value
            if is_logging(call, self.walk):
                return "logging"
            if method_name(call) in ACCUMULATING_METHODS:
                return "accumulation"
        return "value"

    def _step_closure(self, site: Site[cst.CSTNode], read: cst.CSTNode, loop: cst.CSTNode) -> None:
        statement = site.statement
        assert type(statement) is cst.Expr
        previous = self.part.step_closures.get(statement)
        reason = previous.blocked if previous else None
        if site.nested:
            reason = "it reads inside a comprehension"
        elif any(type(n) is cst.FormattedStringExpression and n.equal is not None for n in walk(statement)):
            reason = "an f-string `=` prints the expression's own text"
        elif self.facts.huggingface.accelerators and loop not in self.facts.training.loops:
            reason = "Accelerate places the step barriers of this loop (its prepared loader's): the port leaves the loop to it"
        elif self.facts.lightning.drives_training:
            reason = "Lightning places the step barriers of this loop"
        elif loop not in self.facts.training.loops and (
            barriers := [b for b in self.flow.sites.barriers if loop in b.loops]
        ):
            if not any(b.order > site.order and b.loops[-1] is loop and not b.conditional for b in barriers):
                reason = "no step barrier follows it in the iteration"
        reads = (*previous.reads, read) if previous else (read,)
        self.part.step_closures[statement] = StepClosure(reads, loop, reason)

    def _tests_device_value(self, scope: Scope, test: cst.BaseExpression) -> bool:
        """A test whose truth value comes from a device tensor (``if loss < best:``,
        ``while t.sum() > 0``): Python calls bool() on it, which reads it."""
        if type(test) is cst.BooleanOperation:
            return self._tests_device_value(scope, test.left) or self._tests_device_value(scope, test.right)
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._tests_device_value(scope, test.expression)
        return self.flow.is_device(scope, test)

    def _carried_state(self, reads: dict[cst.CSTNode, Site[cst.BaseExpression]]) -> None:
        reading_loops = {site.loops[-1] for site in reads.values() if site.loops and not site.conditional}
        training = self.facts.training
        barriered = {loop for b in self.flow.sites.barriers for loop in b.loops}
        # Training loops, loops that get a barrier anyway, and loops within a step (a forward computation's, a generator's).
        skipped = training.all_loops | training.loops.keys() | training.loops_within_a_step | barriered
        # Loops without autograd that read nothing (sampling): the outermost that carries a value.
        read_in = {outer for site in reads.values() for outer in site.loops}
        unread = {loop for loop in self.flow.no_grad_loops if type(loop) is cst.For} - skipped - read_in
        for loop in sorted(reading_loops - skipped, key=self._order) + sorted(unread, key=self._order):
            if type(loop) is cst.For and self.flow.from_device_loader(loop):
                continue
            site = self.flow.sites.loops[loop]
            if loop in unread and any(
                o is not loop and (o in self.part.carried_state or o in training.all_loops or o in barriered)
                for o in site.loops
            ):
                continue  # an outer loop's barrier (a sampling loop's, a training step's) ends this one's iterations too
            if loop in unread and not self._calls_a_model(loop):
                continue  # ``for d in range(n): x = F.interpolate(x, ...)``: a few library operations, no sampler
            scope = site.scope
            rebound = set(names_in(loop.target)) if type(loop) is cst.For else set()
            carried: list[str] = []
            entering = self._device_on_entry(scope, loop) if loop in unread else set()
            for targets, value, loops, augmented in scope.assignments:  # in order: the first assignment decides
                if loop in unread:
                    if loop not in loops:
                        continue
                    if not any(type(n) is cst.Call for n in walk(value)):
                        if loops[-1] is loop and not augmented:
                            rebound.update(targets)  # (``frame, reward, *_ = outputs``: bound anew each iteration)
                        continue  # computed by a call (a model's forward, a sampler's step), at any depth
                elif not loops or loops[-1] is not loop:
                    continue
                used = variables_in(value)  # (not ``x`` of ``data.x``: that is the batch's field)
                for target in targets:
                    if target in rebound:
                        continue
                    rebound.add(target)
                    if target in used and (target in entering or target in self.flow.owner(scope, target).device):
                        carried.append(target)
            steps = [o for o in site.loops if o is not loop and o in training.all_loops]
            if carried and not any(_backpropagates(o, set(carried)) for o in steps):
                self.part.carried_state[loop] = tuple(carried)
                if loop in unread:
                    self.part.unread_carried.add(loop)

    def _device_on_entry(self, scope: Scope, loop: cst.CSTNode) -> set[str]:
        """The names last bound to a device value before ``loop`` (``images = noise``, the noise made on the
        device), also those read to the host after it (``images = images.cpu().numpy()``): the names' device
        sets hold only what is a device value everywhere."""
        entering: set[str] = set()
        for targets, value, loops, _ in scope.assignments:
            if loop in loops:
                break
            if len(targets) == 1 and self.flow.is_device(scope, value):
                entering.add(targets[0])
            else:
                entering.difference_update(targets)
        return entering

    def _calls_a_model(self, loop: cst.CSTNode) -> bool:
        """The loop calls a model or a method of its own object (``model(tokens)``, ``self.p_sample(img, t)``,
        ``self.unet(x, t)``): each iteration runs a forward, not only a library's operations (``F.interpolate``,
        ``rearrange``) or a tensor's methods."""
        for node in walk(loop):
            if type(node) is not cst.Call:
                continue
            func = node.func
            if type(func) is cst.Name:
                if func.value not in _BUILTINS and "." not in (self.walk.resolve(func) or ""):
                    return True
            elif (name := dotted(func)) is not None and name.startswith("self."):
                return True
        return False

    def _order(self, loop: cst.CSTNode) -> int:
        return self.flow.sites.loops[loop].order


_BUILTINS = frozenset(
    {"len", "range", "enumerate", "zip", "list", "tuple", "dict", "set", "print", "isinstance", "min", "max", "sum"}
    | {"int", "float", "str", "bool", "abs", "round", "reversed", "sorted", "iter", "next", "getattr", "hasattr"}
    | {"tqdm", "trange"}
)


def _backpropagates(step: cst.CSTNode, names: set[str]) -> bool:
    """The training loop's iteration calls a backward of one of ``names`` (``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``): an inner loop that carries
    it (``for i in range(heads): loss = loss + ...``) builds the step's own loss, ended by the
    step's barrier; one of its own would cut the forward from its backward."""
    return any(
        type(node) is cst.Call and method_name(node) == "backward" and bool(variables_in(node) & names)
        for node in walk(step)
    )


def variables_in(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads as variables: ``data`` of ``data.x``, but not the attribute ``x``,
    nor a keyword's name (``f(dim=dim)`` reads ``dim`` once)."""
    found = walk(node)
    named = {id(sub.attr) for sub in found if type(sub) is cst.Attribute}
    named |= {id(sub.keyword) for sub in found if type(sub) is cst.Arg and sub.keyword is not None}
    return {sub.value for sub in found if type(sub) is cst.Name and id(sub) not in named}


def changed_in_place_after(
    loop: cst.CSTNode, statement: cst.CSTNode, names: set[str], mappings: set[str] | None = None
) -> set[str]:
    """Which of the tensors ``names`` (name chains) the iteration changes in place after
    ``statement``, before its barrier: ``loss += w * reg`` (a tensor's ``+=`` is in place),
    ``loss.add_(...)``, ``loss[mask] = 0``; a name bound anew (``loss = ...``) holds another
    tensor from there.  A name given an item by a string key (``logs["lr"] = lr``: no tensor
    takes one) is a mapping, not a tensor: it goes into ``mappings``, not into the result."""
    changed: set[str] = set()
    watched = set(names)
    after = False
    stack: list[cst.CSTNode] = [loop]
    while stack and watched:
        node = stack.pop()
        if node is statement:
            after = True
            continue
        kind = type(node)
        if after:
            if kind is cst.AugAssign:
                target = node.target  # type: ignore[attr-defined]  # an AugAssign
                held = dotted(target.value if type(target) is cst.Subscript else target)
                if held in watched:
                    changed.add(held)
            elif kind is cst.Assign:
                for assigned in node.targets:  # type: ignore[attr-defined]  # an Assign
                    target = assigned.target
                    if type(target) is cst.Subscript and (held := dotted(target.value)) in watched:
                        if _string_keyed(target):
                            watched.discard(held)
                            if mappings is not None:
                                mappings.add(held)
                        else:
                            changed.add(held)
                    elif (held := dotted(target)) in watched:
                        watched.discard(held)  # bound anew: later changes are another tensor's
            elif kind is cst.Call:
                method = method_name(node)  # type: ignore[arg-type]  # a Call
                if (
                    method is not None
                    and method.endswith("_")
                    and not method.startswith("_")
                    and (held := dotted(receiver(node))) is not None  # type: ignore[arg-type]  # a Call
                    and held in watched
                ):
                    changed.add(held)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue  # runs when called, not in this step
        stack.extend(reversed(children(node)))
    return changed


def _moved_in_pieces(calls: Iterable[cst.CSTNode]) -> set[str]:
    """The names whose attributes the file moves to the device in pieces (``dataset`` of
    ``dataset.x[nodes].float().to(device)``): a slice (or what a method makes of one) of an attribute
    of the name, moved."""
    found: set[str] = set()
    for call in calls:
        if type(call) is not cst.Call or method_name(call) not in ("to", "cuda"):
            continue
        value = receiver(call)
        sliced = False
        while type(value) is cst.Call or type(value) is cst.Subscript:
            if type(value) is cst.Subscript:
                sliced, value = True, value.value
            else:
                value = receiver(value)  # type: ignore[arg-type]  # narrowed by type(value) is cst.Call
        name = dotted(value) if value is not None else None
        if sliced and name is not None and name.count(".") == 1 and not name.startswith("self."):
            found.add(name.split(".")[0])
    return found


def _string_keyed(target: cst.Subscript) -> bool:
    """``logs["lr"]``, ``logs[f"{k}_mean"]``: an item by a string key (a mapping's; a tensor takes none)."""
    if len(target.slice) != 1 or type(target.slice[0].slice) is not cst.Index:
        return False
    key = target.slice[0].slice.value
    return type(key) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
