"""XLA403 load-map-location: ``torch.load`` onto a CUDA or XLA device loads on the CPU instead
(``load_state_dict`` copies a state dict's tensors over; a pickled module is moved after the load, an
optimizer pickled with it and an object holding a module are reported), and so does a load without a
map location, in every file a run converts; a map location that mentions CUDA in a shape the tool does not rewrite
(a dict) is reported, unless it sends every device to the CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.checkpoint.rules.cpu_fallback_load_cases import cpu_fallback_invalid, cpu_fallback_valid
from codemods.checkpoint.rules.dataset_input_cases import dataset_input_invalid, dataset_input_valid
from codemods.checkpoint.rules.dataset_reload_cases import dataset_reload_invalid, dataset_reload_valid
from codemods.checkpoint.rules.dead_branches import (
    dead_branch_invalid,
    dead_branch_valid,
    live_loads,
    live_locations,
    live_moves,
)
from codemods.checkpoint.rules.fresh_file_cases import fresh_file_invalid, fresh_file_valid
from codemods.checkpoint.rules.module_set_cases import module_set_invalid, module_set_valid
from codemods.checkpoint.rules.pickled_module_cases import (
    pickled_module_invalid_cases,
    read_as_a_dict_invalid,
    read_as_a_dict_valid,
)
from codemods.checkpoint.rules.private_file_cases import private_file_valid
from codemods.checkpoint.rules.published_weight_cases import published_weight_invalid, published_weight_valid
from codemods.checkpoint.rules.shown_device_cases import shown_device_invalid, shown_device_valid
from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A PyTorch Geometric dataset's processed cache: process() saves the CPU-built graphs, __init__ loads them.
_DATASET_CACHE = """
import torch
from torch_geometric.data import Data, InMemoryDataset


class Graphs(InMemoryDataset):
    def __init__(self, root):
        super().__init__(root)
        self.data, self.slices = torch.load(self.processed_paths[0])

    def process(self):
        items = [Data(x=torch.randn(3, 4)) for _ in range(10)]
        torch.save(self.collate(items), self.processed_paths[0])
"""

LOAD_MAP_LOCATION = Rule(
    code="XLA403",
    name="load-map-location",
    severity="error",
    summary="`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead",
    fixable=True,
    why="Loading onto a CUDA device raises without CUDA, and XLA cannot restore storages straight onto its "
    "device (`map_location=<the XLA device>` raises, and so does its text, `str(self.device)` or "
    '`f"{device}"`: "xla:0" once the device is ported, or its type, `args.device.type`: "xla"); loaded on the CPU, '
    "`load_state_dict` copies a state dict's tensors to wherever the model is. A checkpoint that holds a whole "
    'pickled module (`model = torch.load(p)`, `model = ckpt["model"]`) has no load_state_dict after it: on the CPU '
    "the module would meet batches on the XLA "
    "device, so the port moves it there after the load (`.to(<XLA device>)`), unless the code moves it already. "
    "A name is taken for a module when it is a model of the file, or called, or a module's method is called on it "
    "(the finding says which); a loaded value the code reads as a dict is none, though a function of another scope "
    "has its name and is called (torchbeast's nested `def checkpoint():`): one handed by key to load_state_dict "
    '(`checkpoint["model_state_dict"]`), or read by a string key where it is loaded with no module\'s method called '
    "on it (an `nn.ModuleDict` has string keys too); `.to()` on a dict raises, so it is not moved. "
    "A load in a branch that never runs on XLA gets no map location and no finding: under a CUDA availability "
    "check the port keeps (`if torch.cuda.is_available(): torch.load(p)`, which XLA105 reports; False on an XLA "
    "host), or in the else of its negation (kospeech's checkpoint.py, whose else loads onto the CPU); a check that "
    "picks the device is dropped (XLA104), and the loads under it get the map location. "
    'An optimizer pickled with it (`optimizer = ckpt["optimizer"]`) holds the CPU parameters that a move to XLA '
    "replaces with new ones, and would step none of them: reported, to be built again over the moved parameters "
    "with the pickled one's `state_dict()` loaded into it. A state dict whose tensors are set into a module as they "
    "are (transformers' `low_cpu_mem_usage` load: `new_val = state_dict[k]`, `torch.nn.Parameter(new_val)`, "
    "`setattr(submodule, name, new_val)`; `register_buffer`, accelerate's `set_module_tensor_to_device`) is no "
    "pickled module: none of its tensors is moved (that would leave the model part on XLA, part on the CPU); they "
    "go with the module when it is moved. A pickled object whose attribute is used as a module "
    "(`trainer = torch.load(p)`, then `trainer.model.eval()`) and that nothing moves is reported: the tool cannot "
    "move what an object holds. A `torch.load` "
    "without a map location restores each storage where it was saved: a checkpoint saved from a CUDA run (the "
    "script's own, or a pretrained one the project ships, loaded by a helper module that never names CUDA) "
    "raises on a host without CUDA, and so does one fetched by torch.hub's `load_state_dict_from_url` "
    "(`torch.utils.model_zoo.load_url`), which loads it with torch.load; not torchvision's published weights "
    "(a URL under `https://download.pytorch.org/models/` or `https://s3.amazonaws.com/pytorch/models/`, written "
    "out or through a module-level dict of them, faster-rcnn's `model_zoo.load_url(model_urls['resnet101'])`), "
    "which are CPU tensors: torchvision loads them with no map location, on hosts without CUDA too. A load in a `try` whose handler (a bare `except:`, `Exception`, `BaseException` or "
    '`RuntimeError`) loads the same file onto the CPU (`map_location=lambda storage, loc: storage`, `"cpu"`) '
    "gets no finding: without CUDA a CUDA checkpoint raises RuntimeError there, and the fallback loads it on the "
    "CPU, where XLA must (GRU4REC-pytorch's main.py). So every other such load in every file a run converts gets "
    '`map_location="cpu"`, whether or not the file mentions CUDA: the tool cannot see where a checkpoint was '
    "saved, and the change is safe (a checkpoint saved on the CPU loads the same; `weights_only` and the "
    "other arguments are left as they are). A file belongs to the port when a run converts it: in a run on "
    "the project every file does; a file left out of a run is not changed, and a single-file run that uses "
    "such a load of a project module it does not convert says so (XLA003). A load of a file that the same "
    "module writes with `torch.save` of host data it builds (a cache of ids: `torch.save(self.ids, ids_file)` "
    "of `list(range(n))`, then `self.ids = torch.load(ids_file)`; numbers, strings and containers of them), or "
    "of tensors it builds on the CPU (a processed-data cache: `x = torch.randn(64, 4)`, "
    "`torch.save((x, (x.sum(1) > 0).float()), path)`: a factory without a device, arithmetic and the methods that "
    "keep a tensor where it is), holds no CUDA storage and loads the same anywhere: it still gets the map location "
    "(harmless), but a single-file run does not name it as a checkpoint. A Dataset class (torch's, or PyTorch "
    "Geometric's `InMemoryDataset`) that loads what it saves itself (`torch.save(self.collate(items), path)` in "
    "`process()`, `torch.load(path)` in `__init__`: its processed cache of CPU-built data, whose `torch.save` stays "
    "as it is) gets no finding: the value analysis takes a Dataset's saves for host data, which hold no CUDA storage; "
    "the attributes its `__init__` binds to that reload (`self.data, self.slices = torch.load(path)`, which `process()` "
    "binds again to what it reads and collates and saves there: DIG's SentiGraphDataset) add nothing but what the "
    "class saved there, and a cache of ids it builds (`self.ids = list(range(n))`) is host data; "
    "so are the data its `__init__` is given and binds (`self.data = data`, `self.percent = int(percent)`), which "
    "`process()` builds the cache from (SEAL's subgraphs of an OGB graph), and what `__init__` computes of its "
    "parameters (`self.Arow = SparseRowIndexer(A)`, `self.links = links[perm]`, handed by `process()` to a function "
    "of the module: IGMC's), as long as nothing there moves them (a value loaded from a file is not built there) "
    "and no call of the class in the module hands it a moved value (`Graphs(root, graph.cuda())`: then the cache "
    "built of it may hold CUDA storages, and the load keeps the finding). "
    "Nor does a load of a file the module saves under a name made fresh for the run (`ckpt = 'out/' + "
    "uuid.uuid4().hex + '.pt'`, `torch.save(model.state_dict(), ckpt)`, then `torch.load(ckpt)`): no CUDA run can "
    "have written it, and what this run saved there (xm.save's CPU tensors, or XLA tensors, which torch.load "
    "restores on the XLA device) loads as it is; under a fixed name the file may be a CUDA run's. Nor does a load of an in-memory buffer or temporary file "
    "that the same process saved into (`buf = io.BytesIO()`, `torch.save(state, buf)`, `buf.seek(0)`, "
    "`torch.load(buf)`; XLA401): it holds this run's own data. Nor does a load whose path reads a config attribute (a chain of three parts "
    "or more, its first left out: `form.target.mag` of `find_all(hp.form.target.mag)`) that the path of every "
    "`torch.save` of the project reading it also reads, naming the same file beyond it, where each of those saves "
    "host data (voicefilter's generator script: `torch.save(torch.from_numpy(mag), formatter(dir_, "
    "hp.form.target.mag, num))`; checkpoint/written_files.py): no CUDA run can have written a CUDA storage there; "
    "a save of a moved tensor under the chain keeps the finding. The chain as the whole path, or handed to a glob "
    "or formatter of the pattern, names the file; where it names a folder, the string literals after it (the "
    'file name: `os.path.join(cfg.data.root, "pretrained.pth")`) must be the same in both paths, so a load of '
    "one file of a folder that a preprocessing script saves other files into "
    "(`os.path.join(cfg.data.root, name)`) keeps the finding, and so does a load whose file name beyond the "
    "chain is no literal. Any other load of a module the run does not convert stays an error "
    "there, not a warning: the tool cannot see what the file holds, and a checkpoint saved from a CUDA run, "
    "loaded without a map location, raises on an XLA host. A dict map location is reported when it keeps a "
    'CUDA device, not when it sends every device it names to the CPU (`{"cuda:0": "cpu"}`): that loads without '
    "CUDA, and load_state_dict copies the tensors over; nor is a name the function binds only to a choice that is "
    'the CPU without CUDA (`device = None if torch.cuda.is_available() else "cpu"`): on XLA it loads onto the CPU '
    "already (XLA104 leaves it). A lambda that moves each storage to CUDA "
    '(`lambda storage, loc: storage.cuda()`) becomes "cpu" too: a storage has no XLA move (its `to` takes '
    "the device by keyword only), and load_state_dict copies the tensors over.",
    examples=lambda: (
        invalid(
            """
            import torch

            state = torch.load("model.pt", map_location="cuda:0")
            """,
            """
            import torch

            state = torch.load("model.pt", map_location="cpu")
            """,
            findings=(Expected(3, 45, 'map_location "cuda:0" -> "cpu"'),),
        ),
    ),
    valid=lambda: (
        *read_as_a_dict_valid(),
        *published_weight_valid(),
        *dead_branch_valid(),
        *cpu_fallback_valid(),
        *fresh_file_valid(),
        *private_file_valid(),
        *dataset_input_valid(),
        *dataset_reload_valid(),
        *module_set_valid(),
        *shown_device_valid(),
        *(
            valid(_DATASET_CACHE, target=target, note=f"a-dataset-reloads-the-cache-it-saves-{target}")
            for target in ("2.9", "sagemaker")
        ),
        valid(
            """
            import os
            import torch

            class Processed(torch.utils.data.Dataset):
                def __init__(self, path, device):
                    if not os.path.exists(path):
                        x = torch.randn(64, 4)
                        torch.save((x, (x.sum(1, keepdim=True) > 0).float()), path)
                    self.x, self.y = torch.load(path)
            """,
            note="a-dataset-reloads-its-processed-cache-of-cpu-tensors",
        ),
        valid(
            """
            import torch

            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location=lambda storage, loc: storage)
            """,
        ),
        valid(
            """
            import torch

            pretrained = torch.load("pretrained.pth", map_location={"cuda:0": "cpu"})
            """,
            note="a-dict-that-maps-cuda-to-the-cpu",
        ),
    ),
    invalid=lambda: (
        *cpu_fallback_invalid(),
        *published_weight_invalid(),
        *dataset_input_invalid(),
        *dataset_reload_invalid(),
        invalid(
            """
            import torch
            import torch_geometric.data as pyg


            class Embedded(pyg.InMemoryDataset):
                def __init__(self, root):
                    super().__init__(root)
                    self.features = torch.load("features.pt")
            """,
            """
            import torch
            import torch_geometric.data as pyg


            class Embedded(pyg.InMemoryDataset):
                def __init__(self, root):
                    super().__init__(root)
                    self.features = torch.load("features.pt", map_location="cpu")
            """,
            alias=True,
            note="a-dataset-that-loads-what-it-does-not-save",
            findings=(Expected(8, 51, 'torch.load(...) -> map_location="cpu"'),),
        ),
        *pickled_module_invalid_cases(),
        *read_as_a_dict_invalid(),
        *dead_branch_invalid(),
        *fresh_file_invalid(),
        *module_set_invalid(),
        *shown_device_invalid(),
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2).cuda()
            model = torch.load("best.pt", weights_only=False)
            model = model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            model = torch.load("best.pt", weights_only=False, map_location="cpu")
            model = model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a pickled module moved after the load: only the map location",
            findings=(Expected(5, 51, 'torch.load(...) -> map_location="cpu"'),),
        ),
        invalid(
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
            state = torch.load("m.pt", map_location=device)
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            """
            import torch

            loc = 'cuda:{}'.format(args.gpu)
            checkpoint = torch.load(args.resume, map_location="cpu")
            state = torch.load("m.pt", map_location="cpu")
            other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
            """,
            findings=(
                Expected(4, 51, 'map_location loc -> "cpu"'),
                Expected(5, 41, 'map_location device -> "cpu"'),
                Expected(6, 41, 'map_location `{"cuda:1"'),
            ),
        ),
        invalid(
            """
            import torch

            pretrained = torch.load("pretrained.pth", map_location={"cuda:0": "cpu", "cuda:1": "cuda:0"})
            """,
            target="sagemaker",
            note="a dict that keeps a CUDA device",
            findings=(Expected(3, 56, 'map_location `{"cuda:0": "cpu", "cuda:1": "cuda:0"}` names CUDA devices'),),
        ),
        invalid(
            """
            import torch as th

            state = th.load("m.pt", map_location=th.device("cuda"))
            """,
            """
            import torch as th

            state = th.load("m.pt", map_location="cpu")
            """,
            alias=True,
            findings=(Expected(3, 38, 'map_location th.device("cuda") -> "cpu"'),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn


            def get_vocoder(device):
                vocoder = nn.Conv1d(80, 1, 3)
                ckpt = torch.load("pretrained/generator.pth.tar", weights_only=True)
                vocoder.load_state_dict(ckpt["generator"])
                return vocoder.to(device)
            """,
            """
            import torch
            import torch.nn as nn


            def get_vocoder(device):
                vocoder = nn.Conv1d(80, 1, 3)
                ckpt = torch.load("pretrained/generator.pth.tar", weights_only=True, map_location="cpu")
                vocoder.load_state_dict(ckpt["generator"])
                return vocoder.to(device)
            """,
            note="no-cuda-in-the-file",
            findings=(
                Expected(
                    7,
                    74,
                    'torch.load(...) -> map_location="cpu": a checkpoint saved from a CUDA run (a pretrained one '
                    "included) holds CUDA storages, which load nowhere without CUDA; one saved on the CPU loads "
                    "the same",
                ),
            ),
        ),
        invalid(
            """
            from torch import load as load_checkpoint

            state = load_checkpoint(path)
            """,
            """
            from torch import load as load_checkpoint

            state = load_checkpoint(path, map_location="cpu")
            """,
            target="sagemaker",
            alias=True,
            note="no-cuda-in-the-file-sagemaker",
            findings=(Expected(3, 31, 'torch.load(...) -> map_location="cpu"'),),
        ),
        *(
            invalid(
                f"""
                import os
                import torch

                def get_dataset(cache_path, model):
                    if os.path.isfile(cache_path):
                        data = torch.load(cache_path)
                    else:
                        data = {{"train": {built}}}
                        torch.save(data, cache_path)
                    return data
                """,
                f"""
                import os
                import torch{xm_import}

                def get_dataset(cache_path, model):
                    if os.path.isfile(cache_path):
                        data = torch.load(cache_path, map_location="cpu")
                    else:
                        data = {{"train": {built}}}
                        {save}(data, cache_path)
                    return data
                """,
                target=target,
                note=f"a-cache-built-by-a-comprehension-over-{over}-{target}",
                findings=(Expected(7 if xm_import else 6, 39, why),),
            )
            for target in ("2.9", "sagemaker")
            # host data stays torch.save in a one-process script (XLA401: no device tensor to move)
            for built, over, why, save, xm_import in (
                (
                    "[[i, i + 1, i + 2] for i in range(32)]",
                    "a-range",
                    "this module saves host data there (no CUDA storages), which loads the same anywhere",
                    "torch.save",
                    "",
                ),
                (
                    "[p for p in model.parameters()]",
                    "parameters",
                    "a checkpoint saved from a CUDA",
                    "xm.save",
                    "\n                import torch_xla.core.xla_model as xm",
                ),
            )
        ),
        *(
            invalid(
                f"""
                import os
                import torch

                class Processed(torch.utils.data.Dataset):
                    def __init__(self, path, device):
                        if not os.path.exists(path):
                            x = torch.randn(64, 4){move}
                            torch.save((x, (x.sum(1, keepdim=True) > 0).float()), path)
                        self.x, self.y = torch.load(path)
                """,
                f"""
                import os
                import torch

                class Processed(torch.utils.data.Dataset):
                    def __init__(self, path, device):
                        if not os.path.exists(path):
                            x = torch.randn(64, 4){move}
                            torch.save((x, (x.sum(1, keepdim=True) > 0).float()), path)
                        self.x, self.y = torch.load(path, map_location="cpu")
                """,
                target=target,
                note=f"a-processed-cache-of-{'moved' if move else 'cpu'}-tensors-{target}",
                findings=(Expected(9, 43, why),),
            )
            for target in ("2.9", "sagemaker")
            for move, why in ((".to(device)", "holds CUDA storages, which load nowhere without CUDA"),)
        ),
        *(
            invalid(
                """
                import torch
                import torch.utils.model_zoo as model_zoo
                from torch.hub import load_state_dict_from_url

                backbone = model_zoo.load_url(BACKBONE_URL)
                head = load_state_dict_from_url(HEAD_URL, None, "cuda")
                """,
                """
                import torch
                import torch.utils.model_zoo as model_zoo
                from torch.hub import load_state_dict_from_url

                backbone = model_zoo.load_url(BACKBONE_URL, map_location="cpu")
                head = load_state_dict_from_url(HEAD_URL, None, "cpu")
                """,
                target=target,
                alias=True,
                note=f"hub-loaders-{target}",
                findings=(
                    Expected(5, 45, 'model_zoo.load_url(...) -> map_location="cpu": a checkpoint saved from a CUDA'),
                    Expected(6, 49, 'map_location "cuda" -> "cpu"'),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                f"""
                import torch{" as th" if torch == "th" else ""}

                checkpoint = {torch}.load(path, map_location=lambda storage, loc: storage.cuda({index}))
                model.load_state_dict(checkpoint["state_dict"])
                """,
                f"""
                import torch{" as th" if torch == "th" else ""}

                checkpoint = {torch}.load(path, map_location="cpu")
                model.load_state_dict(checkpoint["state_dict"])
                """,
                target=target,
                alias=torch != "torch",
                note=f"a-lambda-that-moves-each-storage-to-cuda-{torch}-{target}",
                findings=(Expected(3, 39 + len(torch), f"map_location lambda storage, loc: storage.cuda({index})"),),
            )
            for target in ("2.9", "sagemaker")
            for torch, index in (("torch", ""), ("th", "args.gpu"))
        ),
    ),
)

# The shapes of map location it reads, by node type: strings, names, conditions, string
# operations and dicts; a call (``torch.device("cuda")``, ``"cuda:{}".format(i)``) and a lambda
# that moves each storage (``lambda storage, loc: storage.cuda()``) are rewritten when they
# name a device, never reported.
_REPORTED = "SimpleString FormattedString Name Attribute IfExp Dict BinaryOperation"
_REWRITTEN = f"{_REPORTED} Call Lambda"


@on_facts(LOAD_MAP_LOCATION, nodes=lambda facts: live_locations(facts, facts.checkpoint.map_locations, _REWRITTEN))
def _on_the_cpu(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """A map location that names a CUDA or XLA device (the device facts say which names hold one)."""
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    new = ctx.fix(
        LOAD_MAP_LOCATION,
        original,
        f"map_location {ctx.code(original)} -> {{new}}: XLA cannot load straight onto its device; "
        + _after_the_load(ctx, ctx.facts.checkpoint.located_loads.get(original))
        + (f" (`{original.value}` may now be unused)" if isinstance(original, cst.Name) else ""),
        lambda: quoted_like(original, "cpu"),
    )
    if new is None:
        return updated
    ctx.forget_removed(original, updated)
    return new


@reports_facts(
    LOAD_MAP_LOCATION, nodes=lambda facts: live_locations(facts, facts.checkpoint.unported_map_locations, _REPORTED)
)
def _report_unported(ctx: Context[Facts], original: cst.BaseExpression) -> str:
    return (
        f"map_location `{ctx.code(original)}` names CUDA devices: load on the CPU "
        "(map_location='cpu'); load_state_dict copies to the XLA device"
    )


@on_facts(LOAD_MAP_LOCATION, nodes=lambda facts: live_loads(facts, facts.checkpoint.unlocated_loads))
def _load_on_the_cpu(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A ``torch.load`` without a map location."""
    import libcst as cst

    from codemods.engine.nodes import with_keyword

    if original in ctx.facts.checkpoint.host_data_loads:
        why = "this module saves host data there (no CUDA storages), which loads the same anywhere"
    else:
        why = _why_unlocated(ctx, original)
    return ctx.fix_or_keep(
        updated,
        LOAD_MAP_LOCATION,
        original,
        f'{_loader(ctx, original)}(...) -> map_location="cpu": {why}',
        lambda: updated.with_changes(args=with_keyword(list(updated.args), "map_location", cst.SimpleString('"cpu"'))),
        result=lambda call: call.args[-1],
    )


@reports_facts(LOAD_MAP_LOCATION, nodes=lambda facts: live_loads(facts, facts.checkpoint.module_loads))
def _module_on_the_cpu(ctx: Context[Facts], original: cst.Call) -> str:
    """A load whose result is a model of the file (a pickled module) that nothing moves after."""
    loaded = ctx.facts.checkpoint.module_loads[original]
    names = ", ".join(f"`{name}`" for name in loaded)
    return (
        f"{names} comes back from this load as a pickled module, on the CPU: XLA loads only to the CPU "
        "(map_location), while the port moves the batches to the XLA device; move it after the load "
        "(`.to(device)`) and build its optimizer over the moved parameters, or save and load its state_dict()"
        + _module_sign(ctx, loaded[0])
    )


def _module_sign(ctx: Context[Facts], name: str) -> str:
    """Why the tool takes ``name`` for a module: a model of the file, or what is called on it."""
    sign = ctx.facts.checkpoint.module_signs.get(name)
    return (
        f" (taken for a module: {'a model of the file' if name in ctx.facts.training.models or sign is None else sign})"
    )


_SET_INTO_A_MODULE = (
    "its tensors are set into a module as they are (a state dict, not a pickled module), on the CPU, and go to the "
    "XLA device when that module is moved"
)


def _why_unlocated(ctx: Context[Facts], load: cst.Call) -> str:
    saved_by = (
        "a checkpoint the CUDA runs of this script saved"
        if ctx.facts.checkpoint.cuda_script
        else "a checkpoint saved from a CUDA run (a pretrained one included)"
    )
    cpu_checkpoints = "" if ctx.facts.checkpoint.cuda_script else "; one saved on the CPU loads the same"
    after = (
        _SET_INTO_A_MODULE
        if load in ctx.facts.checkpoint.module_set_loads
        else "load_state_dict copies the tensors to the device"
        if load in ctx.facts.checkpoint.state_dict_loads
        else _after_the_load(ctx, load)
    )
    return f"{saved_by} holds CUDA storages, which load nowhere without CUDA{cpu_checkpoints}; {after}"


def _after_the_load(ctx: Context[Facts], load: cst.Call | None) -> str:
    """What becomes of what the load gives back, on the CPU, as far as the file shows it."""
    checkpoint = ctx.facts.checkpoint
    if load is not None and load in checkpoint.module_set_loads:
        return _SET_INTO_A_MODULE
    if load is not None and load in checkpoint.state_dict_loads:
        return "load_state_dict copies the tensors over"
    moved = [name for name, moved_load in checkpoint.module_moves.values() if moved_load is load]
    if moved:
        return f"the pickled module (`{moved[0]}`) is moved to the XLA device after the load"
    if load is not None and (load in checkpoint.module_loads or load in checkpoint.object_loads):
        return "what it holds stays on the CPU"
    return (
        "load_state_dict copies a state dict's tensors to the model's device; anything else it holds stays on the CPU"
    )


def _loader(ctx: Context[Facts], call: cst.Call) -> str:
    """``torch.load``, or the hub loader the call names (``load_state_dict_from_url``)."""
    from codemods.engine.nodes import dotted

    name = dotted(call.func) or ""
    return name if name.endswith(("load_state_dict_from_url", "load_url")) else "torch.load"


@on_facts(LOAD_MAP_LOCATION, nodes=live_moves)
def _moved_after_the_load(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    """A pickled module a name takes from a load, that nothing moves after: moved to the XLA device
    (the original's map location, or its CUDA storages, had placed it on the device)."""
    import libcst as cst

    name, _ = ctx.facts.checkpoint.module_moves[original]

    def build() -> cst.Call | None:
        device = ctx.device()
        if device is None:
            return None
        return cst.Call(func=cst.Attribute(value=updated, attr=cst.Name("to")), args=[cst.Arg(device)])

    return ctx.fix_or_keep(
        updated,
        LOAD_MAP_LOCATION,
        original,
        f"`{name}` comes back from the load as a pickled module, on the CPU (XLA loads only there): "
        f"{{new}} moves it to the XLA device" + _module_sign(ctx, name),
        build,
    )


@reports_facts(LOAD_MAP_LOCATION, nodes=lambda facts: facts.checkpoint.stale_optimizers)
def _stale_optimizer(ctx: Context[Facts], original: cst.BaseExpression) -> str:
    """An optimizer pickled with a module that is moved after the load."""
    optimizer, module = ctx.facts.checkpoint.stale_optimizers[original]
    return (
        f"`{optimizer}` comes back from the load holding the pickled CPU parameters of `{module}`, which the move "
        "to the XLA device replaces with new ones: it would step none of them. Build it again over "
        f"`{module}.parameters()` after the move and load the pickled one's state into it "
        f"(`.load_state_dict({ctx.code(original)}.state_dict())`)"
    )


@reports_facts(LOAD_MAP_LOCATION, nodes=lambda facts: live_loads(facts, facts.checkpoint.object_loads))
def _object_on_the_cpu(ctx: Context[Facts], original: cst.Call) -> str:
    """A pickled object whose attribute is used as a module, and that nothing moves."""
    name, module = ctx.facts.checkpoint.object_loads[original]
    return (
        f"`{name}` comes back from this load as a pickled object, on the CPU (XLA loads only there), and "
        f"`{module}` with it, while the port moves the batches to the XLA device: move it after the load "
        f"(`{module}.to(device)`, an optimizer it holds built again over its parameters), or save and load "
        "its state_dict()"
    )
