"""DGL graphs moved to the XLA device (XLA517): DGL maps a torch device to a context of its
own by the device's type (``utils.to_dgl_context``: ``DGLContext.STR2MASK[device.type]``, whose
keys are cpu, gpu, cuda, opencl and a few more, never "xla"), so ``g.to(torch_xla.device())``
raises KeyError 'xla', and its sparse kernels take only CPU or CUDA tensors.

A DGL graph is followed from what makes one (``dgl.graph``, ``dgl.heterograph``,
``dgl.DGLGraph``, the transforms that return a new graph such as ``dgl.add_self_loop``), from
``dgl.load_graphs`` (its first element is the list of graphs) and ``dgl.unbatch``, from an item of a
``dgl.data`` dataset, through the graph methods that return a graph (``g.int()``,
``g.add_self_loop()``), names and ``self`` attributes, and into a parameter of a function
of the file that a call of the file hands a graph.  What else DGL returns (tensors of
``dgl.mean_nodes``, the modules of ``dgl.nn``) is not a graph: moving it is a tensor's or a
module's move."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, method_name
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk

if TYPE_CHECKING:
    from codemods.facts import Facts

# What DGL returns that is a graph (the package's own names; ``dgl.DGLHeteroGraph`` is the
# class of every graph of DGL 0.5 on).
GRAPH_MAKERS = frozenset(
    f"dgl.{name}"
    for name in (
        "graph heterograph DGLGraph DGLHeteroGraph create_block block_to_graph batch batch_hetero "
        "from_networkx from_scipy bipartite_from_networkx bipartite_from_scipy rand_graph rand_bipartite "
        "knn_graph segmented_knn_graph radius_graph add_self_loop remove_self_loop add_reverse_edges "
        "to_bidirected to_simple to_simple_graph reverse line_graph khop_graph metapath_reachable_graph "
        "node_subgraph edge_subgraph in_subgraph out_subgraph node_type_subgraph edge_type_subgraph "
        "to_homogeneous to_heterogeneous to_homo to_hetero to_block add_nodes add_edges remove_nodes "
        "remove_edges merge reorder_graph adj_product_graph adj_sum_graph sampling.sample_neighbors "
        "sampling.select_topk transforms.add_self_loop transforms.remove_self_loop transforms.to_bidirected "
        "transforms.to_simple transforms.reverse transforms.khop_graph transforms.line_graph"
    ).split()
)
# What returns a list of graphs.
GRAPH_LISTS = frozenset({"dgl.unbatch"})
# ``(graphs, labels) = dgl.load_graphs(path)``.
GRAPH_LOADERS = frozenset({"dgl.load_graphs", "dgl.data.load_graphs", "dgl.data.utils.load_graphs"})
# Methods of a graph that return a graph.
GRAPH_METHODS = frozenset(
    "int long to cpu cuda local_var formats add_self_loop remove_self_loop reverse subgraph edge_subgraph "
    "node_subgraph to_simple pin_memory_ clone".split()
)
_DEVICE_KEYWORD = "device"

# A graph, a list of graphs, ``load_graphs``' pair (graphs, labels), a dataset of graphs.
Kind = Literal["graph", "graphs", "loaded", "dataset"]
Event = (
    tuple[Literal["bind"], str, str, cst.BaseExpression]
    | tuple[Literal["unpack"], str, str, cst.BaseExpression]
    | tuple[Literal["loop"], str, str, cst.BaseExpression]
    | tuple[Literal["move"], str, cst.Call, cst.BaseExpression]
    | tuple[Literal["call"], str, cst.Call, str]
)


class DglGraphAnalysis(Analysis):
    """Replays, once the walk has recorded them in order, what binds, hands and moves DGL
    graphs; a move (or a graph made with ``device=``) whose device ends on XLA is a fact."""

    facts: Facts

    name = "dgl_graphs"
    fills = "cuda_only"
    conclude_reads = ("device", "device_values")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.cuda_only
        self.events: list[Event] = []
        self.made_on: list[tuple[cst.Call, cst.BaseExpression, str]] = []
        self.params: dict[str, tuple[str, ...]] = {}  # function -> its positional parameters, without self
        self.locals: dict[str, set[str]] = {}  # function -> the names it binds
        self.classes: set[str] = set()
        self.uses_dgl = False

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def visit_Import(self, node: cst.Import) -> None:
        self.uses_dgl = self.uses_dgl or any((dotted(a.name) or "").split(".")[0] == "dgl" for a in node.names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = dotted(node.module) if node.module is not None else None
        self.uses_dgl = self.uses_dgl or (not node.relative and (module or "").split(".")[0] == "dgl")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.add(self.walk.qualname)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params and params[0] in ("self", "cls") and self.walk.class_depth:
            params = params[1:]
        self.params[self.walk.qualname] = tuple(params)
        self.locals[self.walk.qualname] = set(params)

    def leave_Assign(self, node: cst.Assign) -> None:
        scope = self._scope()
        for target in node.targets:
            if type(target.target) in (cst.Tuple, cst.List):
                elements = target.target.elements  # type: ignore[attr-defined]  # narrowed by the type test above
                first = dotted(elements[0].value) if elements else None
                if first is not None:
                    self._bound(scope, first)
                    self.events.append(("unpack", scope, first, node.value))
                for element in elements[1:]:
                    if (other := dotted(element.value)) is not None:
                        self._bound(scope, other)
                        self.events.append(("bind", scope, other, cst.Name("None")))
            elif (name := dotted(target.target)) is not None:
                self._bound(scope, name)
                self.events.append(("bind", scope, name, node.value))

    def visit_For(self, node: cst.For) -> None:
        if (name := dotted(node.target)) is not None:
            scope = self._scope()
            self._bound(scope, name)
            self.events.append(("loop", scope, name, node.iter))

    def _bound(self, scope: str, name: str) -> None:
        if scope and "." not in name:
            self.locals.setdefault(scope, set()).add(name)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self._scope()
        callee = self.walk.callee
        method = method_name(node)
        if method in ("to", "cuda") and type(node.func) is cst.Attribute:
            self.events.append(("move", scope, node, node.func.value))
        elif callee in GRAPH_MAKERS:
            device = next(
                (a.value for a in node.args if a.keyword is not None and a.keyword.value == _DEVICE_KEYWORD), None
            )
            if device is not None:
                self.made_on.append((node, device, scope))
        if callee is None and (name := dotted(node.func)) is not None and node.args:
            self.events.append(("call", scope, node, name))

    # -- conclusions -------------------------------------------------------------------------

    def conclude(self) -> None:
        if not self.uses_dgl:
            return
        from codemods.device.values import DeviceValueAnalysis

        values = self.walk.analysis(DeviceValueAnalysis)
        for node, device, scope in self.made_on:
            if values.where_passed(device, scope).on_xla:
                self.part.dgl_creations[node] = code_of(device)
        handed: set[tuple[str, str]] = set()
        for _ in range(3):  # a graph handed on through a few functions (``main(g)``, then ``train(g)``)
            before = len(handed)
            moves = _Replay(self, handed).run()
            if len(handed) == before:
                break
        # ``g.to(args.gpu)``, ``g.to("cuda:%d" % args.gpu)``: a CUDA index or string the port makes XLA's.
        index_moves, strings = self.facts.device.index_moves, self.facts.device.strings
        for call, (held, target, scope) in moves.items():
            if target is None or call in index_moves or target in strings or values.where_passed(target, scope).on_xla:
                self.part.dgl_moves[call] = held

    def function_of(self, name: str, scope: str) -> str | None:
        """The function of this file a call names: ``train`` (module level), ``Model`` (its
        ``__init__``), ``self.step`` in a method of ``Trainer`` (``Trainer.step``)."""
        if name.startswith("self.") and "." in scope:
            name = f"{scope.rsplit('.', 1)[0]}.{name.removeprefix('self.')}"
        if name in self.classes:
            name = f"{name}.__init__"
        return name if name in self.params else None


class _Replay:
    """One pass over the events in the order of the code: what each name holds."""

    def __init__(self, analysis: DglGraphAnalysis, handed: set[tuple[str, str]]) -> None:
        self.analysis = analysis
        self.handed = handed
        self.held: dict[tuple[str, str], Kind | None] = {}
        self.walk = analysis.walk

    def run(self) -> dict[cst.Call, tuple[tuple[str, bool], cst.BaseExpression | None, str]]:
        moves: dict[cst.Call, tuple[tuple[str, bool], cst.BaseExpression | None, str]] = {}
        for event in self.analysis.events:
            scope = event[1]
            if event[0] == "bind":
                self.held[self._key(scope, event[2])] = self.kind(event[3], scope)
            elif event[0] == "unpack":
                found = self.kind(event[3], scope)
                first: Kind | None = "graphs" if found == "loaded" else "graph" if found == "graph" else None
                self.held[self._key(scope, event[2])] = first
            elif event[0] == "loop":
                self.held[self._key(scope, event[2])] = "graph" if self.kind(event[3], scope) == "graphs" else None
            elif event[0] == "move":
                call = event[2]
                if self.kind(event[3], scope) == "graph":
                    held = dotted(event[3])
                    device = None if method_name(call) == "cuda" else arg_value(call, 0, _DEVICE_KEYWORD)
                    if device is not None or method_name(call) == "cuda":
                        moves[call] = ((held, True) if held else (code_of(event[3]), False), device, scope)
            elif event[0] == "call":
                self._handed(event[2], event[3], scope)
        return moves

    def _handed(self, call: cst.Call, name: str, scope: str) -> None:
        function = self.analysis.function_of(name, scope)
        if function is None:
            return
        params = self.analysis.params[function]
        for index, arg in enumerate(call.args):
            if arg.star:
                return
            param = arg.keyword.value if arg.keyword is not None else params[index] if index < len(params) else None
            if param is not None and param in params and self.kind(arg.value, scope) == "graph":
                self.handed.add((function, param))

    def _key(self, scope: str, name: str) -> tuple[str, str]:
        if name.startswith("self.") and "." in scope:
            return (scope.rsplit(".", 1)[0], name)
        if scope and "." not in name and name.split(".")[0] in self.analysis.locals.get(scope, ()):
            return (scope, name)
        return ("", name)

    def _name(self, name: str, scope: str) -> Kind | None:
        key = self._key(scope, name)
        if key in self.held:
            return self.held[key]
        if key[0] == scope and scope and (scope, name) in self.handed:
            return "graph"  # a parameter a call of the file hands a graph
        return None

    def kind(self, value: cst.BaseExpression, scope: str) -> Kind | None:
        """What ``value`` is, as far as DGL goes (None: not a graph of DGL's)."""
        if type(value) is cst.Call:
            callee = self.walk.resolve(value.func)
            if callee in GRAPH_MAKERS:
                return "graph"
            if callee in GRAPH_LISTS:
                return "graphs"
            if callee in GRAPH_LOADERS:
                return "loaded"
            if callee is not None and callee.startswith("dgl.data.") and callee.endswith("Dataset"):
                return "dataset"
            func = value.func
            if type(func) is cst.Attribute and func.attr.value in GRAPH_METHODS:
                return "graph" if self.kind(func.value, scope) == "graph" else None
            return None
        if type(value) is cst.Subscript:
            inner = self.kind(value.value, scope)
            if inner == "loaded":
                index = value.slice[0].slice if len(value.slice) == 1 else None
                is_first = type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0"
                return "graphs" if is_first else None
            return "graph" if inner in ("graphs", "dataset") else None
        name = dotted(value)
        return self._name(name, scope) if name is not None else None
