"""Device: which expressions name a CUDA device (and become the XLA device), which
availability checks pick the device (and are dropped), which names are CUDA indices.

What the analysis collects as the walk goes (and the marks *device code* and *crash code*,
that other analyses add to) is DeviceWalk's, device_walk.py; this module decides from it,
once the walk is done (``finish``) and after the other analyses (``conclude``)."""

from __future__ import annotations

import libcst as cst

from codemods import apis
from codemods.device import (
    check_wrappers,
    device_flags,
    fallbacks,
    helper_moves,
    host_moves,
    shapes,
    tensor_checks,
    uncalled,
)
from codemods.device.device_walk import DeviceWalk
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.shapes import is_device_name
from codemods.device.third_party import project_kernel_calls
from codemods.engine.nodes import arg_value, call_args, dotted, receiver, string_value, walk
from codemods.project.analysis import ProjectAnalysis
from codemods.targets import spellings

_PRINTER = cst.Module(body=[])


_LOADS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})


class DeviceAnalysis(DeviceWalk):
    name = "device"
    reads = ("imports", "project")
    conclude_reads = ("amp", "checkpoint", "lightning", "project")

    # -- results ----------------------------------------------------------------------------

    def finish(self) -> None:
        part = self.part
        part.dot_cuda -= {c for c in part.dot_cuda if self.facts.imports.table.is_module(receiver(c))}  # utils.cuda(x)
        self._own_cuda_calls()  # ``sampler.cuda()``: a project class's own method
        for sub in [sub for sub, (call, rule) in part.replaced_parts.items() if rule is DOT_CUDA]:
            if part.replaced_parts[sub][0] not in part.dot_cuda:
                del part.replaced_parts[sub]
        part.index_of_tensor = self.tensor_indices.of_tensors()
        part.cuda_indices.update(name for name in self.set_device_names if name not in self.string_names)
        before = set(part.cuda_indices)
        part.cuda_indices.update(name for name in self.string_index_names() if name not in self.string_names)
        self.string_only = part.cuda_indices - before  # (indices in the scopes that build the strings only)
        self.local_handed_scopes()  # ``evaluate(args, ...)`` in the function that builds the string
        self.project_string_indices()  # ``.to(args.device)``, ``args`` handed in with a CUDA index
        part.cuda_indices -= {n for n in part.cuda_indices if self.own_devices.own(n, self.device_assignments)}
        self._follow_indices()
        self.handed_index_attributes()
        self.parameter_attribute_moves()
        for call, device, name in self.moves_to + self.device_keywords:
            if (
                name not in part.cuda_indices
                or not self.index_here(name, call)
                or self.own_local_device(call, name, part.cuda_indices)
            ):
                continue
            part.index_moves[call] = device
            if (why := self.handed_index_why.get(name)) is not None and not (
                name in self.string_only and self.in_scopes(call, self.string_scopes.get(name, set()))
            ):
                part.index_why[call] = why
            elif name in self.string_indices:
                part.index_why[call] = (
                    f"this file builds a CUDA device from it (`{self.string_indices[name]}`): an integer device "
                    "is cuda:N, which fails without CUDA"
                )
        for name in self.device_args | set(self.set_device_names):
            for value, conds in self.cuda_string_values.get(name, ()) if not is_device_name(name) else ():
                part.strings.add(value)  # device names had theirs collected where assigned
                self.device_code.update(conds)  # `if torch.cuda.is_available(): device_type = "cuda"` picks it
                self.other_marked.update(conds)
        part.index_guards = {
            node: name
            for node, name in self.index_guard_candidates
            if name in part.cuda_indices and self.index_here(name, node)
        }
        part.generators = {
            call for call in self.generator_candidates if self._on_the_xla_device(arg_value(call, 0, "device"))
        }
        # ``torch.device(device_id)`` of a CUDA index (or of a name named like one, that nothing
        # here makes a string or a device: torch.device of an int is cuda:N), the XLA device once
        # ported (one device per process: the ordinal means nothing there).
        part.calls.update(
            call
            for call, name in self.index_device_calls
            if ((name in part.cuda_indices and self.index_here(name, call)) or shapes.named_like_an_index(name))
            and name not in self.device_assignments
            and name not in self.string_names
            and name not in self.cuda_string_names
        )
        part.unsure_index_moves = {
            call
            for call, device, name in self.moves_to
            if name not in part.cuda_indices
            and device not in part.pending_index_moves  # (reported as such)
            and shapes.named_like_an_index(name)
            and not self._names_a_known_device(name)
            and name not in self.holding_devices
        }
        self.listed.finish(part)
        resolve = self.walk.resolve
        part.timing_syncs = {
            statement
            for statement, call, after in self.lone_calls
            if resolve(call.func) == "torch.cuda.synchronize"
            and any(isinstance(n, cst.Call) and resolve(n.func) in apis.CLOCKS for n in walk(after))
        }
        origin = self.walk.analysis(ProjectAnalysis).origin
        for guarded in helper_moves.spread(self.helper_calls, part.choosers, self.function_params, origin):
            self.device_code.update(guarded)  # a function that moves to CUDA, of the file or of the project
            self.other_marked.update(guarded)
        project_kernel_calls(self.helper_calls, origin, part, self.crash_code)
        self.unread_holders()
        for helper in self.helper_calls:  # a function of the file that crashes without CUDA
            for cond in helper.conds if helper.name in self.crashing_functions and not helper.project else ():
                self.crash_code.setdefault(cond, self.crashing_functions[helper.name])
        self._flags_cleared_by_checks()
        for node in self.availability_ifs:
            if (
                node in self.device_code or shapes.demands_cuda(node, self.part.is_available_call, self.walk)
            ) and node not in self.crash_code:
                fallback = fallbacks.unset_fallback(
                    node, part.is_available_call, self.device_assignments, self.device_flags, self.walk
                )
                if fallback is None:
                    part.ifs.add(node)
                    if node in self.worth_running and isinstance(node, cst.If):
                        part.wait_ifs.add(node)
                else:
                    part.unset_fallbacks[node] = fallback
            elif node in self.device_code and self._loads_without_cuda(node):  # the location's moves stay too
                part.location_moves.update(
                    c
                    for c in walk(node.body)
                    if type(c) is cst.Call and c in part.dot_cuda and id(c) in self.in_locations
                )
                part.dot_cuda -= part.location_moves
            elif node in self.device_code:
                part.blocked_ifs[node] = self.crash_code[node]
        self._paired_availability_ifs()
        for selection in self.availability_ifexps:
            if selection in self.device_code and selection not in self.crash_code:
                part.selections.add(selection)
                # ``torch.cuda.synchronize() if ... else None``: a wait; another ``else`` (``time.sleep(0)``)
                # does something of its own, which the fold drops: not just a wait (XLA104 as any selection).
                if selection in self.worth_running and dotted(selection.orelse) == "None":
                    part.wait_ifs.add(selection)
        host_moves.mark(part, self.availability_ifs, self.availability_ifexps)
        for name, literals in self.int_assignments.items():
            # `device = 0` used as a device; a `rank = 0` keeps being a number (its
            # `.to(rank)` uses are rewritten where they are).
            # (not one only built into a device string: ``f"cuda:{device}"`` would read the XLA device)
            marked = name in part.cuda_indices and name not in self.string_indices
            if is_device_name(name) and (name in self.device_args or marked):
                part.int_devices.update(literals)
        part.gpu_requirements = {
            node: name
            for node, name in self.requirement_candidates
            if name in self.checking_functions and name in self.counting_functions
        }
        handled = {*part.ifs, *part.blocked_ifs, *part.selections, *part.gpu_requirements}
        part.check_wrappers = {name: _PRINTER.code_for_node(returned) for name, returned in self.wrappers.items()}
        choices = [(c, call) for c, call in self.wrapper_candidates if c in self.device_code and c not in handled]
        check_wrappers.wrapped(part, choices, origin, local=True)
        choices = [(c, call) for c, call in self.project_check_candidates if c in self.device_code and c not in handled]
        check_wrappers.wrapped(part, choices, origin, local=False)
        self._type_checks()
        part.tensor_checks = tensor_checks.around_moves(
            self.tensor_check_candidates, self.device_code, self.crash_code, part.type_checks, self.device_assignments
        )
        dests, namespaces = device_flags.flags_of_project(
            self.ported_flags, self.parsed_names, self.namespace_calls, self.walk.analysis(ProjectAnalysis).origin
        )
        self.ported_dests, self.ported_namespaces = dests, namespaces  # (device/flag_helpers.py)
        for comparison in self.comparisons:  # args.device in ['cpu', 'cuda']: with the flag's default
            strings = device_flags.compared_strings(comparison, dests, namespaces)
            if strings is None:
                continue
            if device_flags.unfollowed(comparison):
                part.unfollowed_flag_tests.add(comparison)
            elif strings:
                part.strings.update(strings)
                part.flag_test_strings.update(strings)
                part.cuda_checks.discard(comparison)
                part.tensor_checks.pop(comparison, None)
        part.cuda_checks.difference_update(part.tensor_checks)
        part.tensor_chosen_strings = tensor_checks.chosen_cuda_strings(self.tensor_check_candidates, part.tensor_checks)
        part.cpu_type_choices = self.tensor_check_candidates.cpu_type_choices

    def _loads_without_cuda(self, node: cst.If | cst.IfExp) -> bool:
        """``if torch.cuda.is_available(): ... torch.load(f, map_location=<CUDA>)`` whose only device
        code is that location, with an ``else`` that loads too (``torch.load(f)``, or the same loader of
        the project called without the location: ``self.load_checkpoint(f)``): the check stays
        (what else it runs, ``torch.cuda.current_device()``, never runs on XLA) and the ``else`` loads
        on the CPU, from where ``load_state_dict`` copies into the model wherever it is."""
        if type(node) is not cst.If or node.orelse is None or not self.location_only(node):
            return False
        # torch's load, or a loader of the project's own (``self.load_checkpoint(f, map_location=...)``), in the else
        loaders = {dotted(c.func) for c in walk(node.body) if type(c) is cst.Call and "map_location" in call_args(c)[1]}
        return any(
            type(c) is cst.Call and (dotted(c.func) in loaders - {None} or self.walk.resolve(c.func) in _LOADS)
            for c in walk(node.orelse)
        )

    def _follow_indices(self) -> None:
        """A CUDA index stays one through plain assignments and arguments: ``self.gpu_id
        = gpu_id``, ``Trainer(model, rank)`` into ``def __init__(self, model, gpu_id)``."""
        pairs = list(self.aliases)
        for callee, call in self.calls_with_names:
            params = shapes.local_params(self.function_params, callee)
            if params is None:
                continue
            positional, keywords = call_args(call)
            for index, arg in enumerate(a for a in positional if not a.star):
                if index < len(params) and (name := dotted(arg.value)) is not None:
                    pairs.append((params[index], name))
            for keyword, arg in keywords.items():
                if keyword in params and (name := dotted(arg.value)) is not None:
                    pairs.append((keyword, name))
        shapes.spread(
            self.part.cuda_indices,
            [(a, b) for a, b in pairs if a not in self.string_names and b not in self.string_names],
        )
        # Names that hold a device (a `device` variable handed to a `gpu_id` parameter).
        self.holding_devices = {n for pair in pairs for n in pair if self._names_a_known_device(n)}
        shapes.spread(self.holding_devices, pairs)
        shapes.spread(self.listed.marked, pairs)

    def _on_the_xla_device(self, device: cst.BaseExpression | None) -> bool:
        """A device argument that is (or becomes) the XLA device on some path."""
        if device is None or string_value(device) == "cpu" or shapes.is_cpu_device(device, self.walk):
            return False
        if isinstance(device, cst.Call) and self.walk.resolve(device.func) in spellings("device"):
            return True
        name = dotted(device)
        return self.names_a_device(device) or (name is not None and name in self.part.cuda_indices)

    def _names_a_known_device(self, name: str) -> bool:
        return (
            is_device_name(name)
            or name in self.device_assignments
            or name in self.string_names
            or name in self.cuda_string_names
        )

    def conclude(self) -> None:
        """Flags that pick the device or switch on mixed precision are switched on (unless
        they also guard code that fails without CUDA).  Parts of expressions replaced
        whole (a map_location that becomes "cpu", a ``torch.device("cuda" if ... else "cpu")``),
        or kept whole (checkpoint's ``host_choices``), are not converted on their own; the
        availability checks no rewrite consumes stay, and are reported."""
        part = self.part
        amp = self.facts.amp
        part.condition_attributes = {
            name.rsplit(".", 1)[1] for node in self.device_code for name in self.cond_refs.get(node, ()) if "." in name
        }
        for name in self.flag_candidates:
            if name in amp.owned_names:
                continue  # a device type or a precision choice: rewritten by the AMP concern
            uses = [node for node, refs in self.cond_refs.items() if name in refs]
            if not set(uses) & (self.device_code - self.worth_running) and set(uses) & self.crash_code.keys():
                continue  # a synchronize beside code failing without CUDA (timing): left False on XLA
            if any(use in self.device_code for use in uses):
                purpose = "picks the device"
            elif (
                (exporter := self.exporter_of(name)) is not None
                and any(w in name.lower() for w in ("cuda", "gpu"))
                and all(shapes.is_truth(v) for v in self.flag_candidates[name])
            ):
                purpose = f"picks the device in the modules that read it (`{exporter}()` returns it)"
            elif name in amp.flags:
                purpose = "switches mixed precision on"
            else:
                continue
            self.switch_on(name, purpose)
        map_locations = self.facts.checkpoint.map_locations
        in_locations = {id(sub) for at in (*map_locations, *self.facts.checkpoint.host_choices) for sub in walk(at)}
        part.calls = {n for n in part.calls if id(n) not in in_locations}
        part.selections = {n for n in part.selections if id(n) not in in_locations}
        part.strings = {n for n in part.strings if id(n) not in in_locations}
        inside_calls = {id(sub) for call in part.calls for sub in walk(call) if sub is not call}
        part.strings = {n for n in part.strings if id(n) not in inside_calls}
        part.selections = {n for n in part.selections if id(n) not in inside_calls}
        # A Lightning accelerator or strategy picked by the check is Lightning's to port (XLA821).
        lightning_choices = [n for n in self.facts.lightning.settings if type(n) is cst.IfExp]
        part.selections.difference_update(lightning_choices)
        folded: list[cst.CSTNode] = [
            *part.cuda_asserts,
            *part.flag_values,
            *part.selections,
            *(node.test for node in part.ifs),
            *(node.test for node in part.blocked_ifs),  # their own finding says what the checks do
            *part.unread_choices,  # (as those)
            *(node.test for node in part.unset_fallbacks),
            *part.calls,
            *map_locations,
            *self.facts.checkpoint.host_choices,
            *lightning_choices,
        ]
        consumed = {sub for node in folded for sub in walk(node)}
        part.kept_availability_checks = {call for call in self.availability_calls if call not in consumed}
        for check in part.cuda_checks:
            if (compared := shapes.checked_for_cuda(check)) is not None:
                if not self._holds_the_xla_device(compared):
                    part.unproven_checks[check] = compared
                    values = dict.fromkeys(
                        " ".join(_PRINTER.code_for_node(value).split())
                        for value in self.device_assignments.get(compared, [])
                    )
                    if len(values) == 1:
                        part.unproven_values[compared] = next(iter(values))
        module = self.walk.analysis(ProjectAnalysis).module
        if (part.strings or part.calls) and module is not None:
            mentioned, within = self.facts.project.context.mentioned_elsewhere, self.walk.in_a_function
            part.uncalled = uncalled.uncalled_nodes(module, [*part.strings, *part.calls], mentioned, within)

    def switch_on(self, name: str, purpose: str) -> None:
        """The flag ``name`` picks the device (or switches on mixed precision): its checks are
        dropped, unless it also guards code that fails without CUDA."""
        uses = [node for node, refs in self.cond_refs.items() if name in refs]
        blocker = next((self.crash_code[u] for u in uses if u in self.crash_code), None)
        for value in self.flag_candidates[name]:
            if value in self.part.unread_choices:
                continue  # ``cmd_args.mode = 'gpu' if torch.cuda.is_available() else 'cpu'``: stays (its own error)
            if blocker is None:
                self.part.flag_values[value] = (name, purpose)
            else:
                self.part.blocked_flags[value] = (name, blocker)

    def exporter_of(self, name: str) -> str | None:
        """``args.cuda = not args.no_cuda and torch.cuda.is_available()`` in a function that
        returns ``args`` (an argument parser's helper): a flag that other modules read (one
        named for CUDA or the GPU picks the device there: its check is dropped); the
        function that returns it."""
        root, _, attr = name.partition(".")
        functions = self.returned_names.get(root)
        return min(functions) if functions and attr and "." not in attr else None
