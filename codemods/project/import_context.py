"""How a file looks up the modules it imports: the ``ImportContext`` a conversion is given
(project/resolver.py's ``FileImports`` for a file of a project, ``GuessedImports`` without its
location), and which modules are never the project's own (the standard library, torch's family,
well-known packages).  Apart from the summaries (project/module_summary.py) because the summaries
are what a module tells the others, and this is how a file asks; plain data, no LibCST."""

from __future__ import annotations

import sys
from typing import Protocol

from codemods.library_apis import LIBRARY_LOOP_PACKAGES
from codemods.project.module_summary import Found, ModuleSummary, StarNames


class ImportContext(Protocol):
    """Where a file's imports lead: ``lookup("util.misc", "NativeScaler")`` for
    ``from util.misc import NativeScaler``; None for anything outside the project."""

    def lookup(self, module: str, name: str) -> Found | None: ...

    def lookup_from(self, summary: ModuleSummary, module: str, name: str) -> Found | None:
        """``lookup`` as the module that ``summary`` sums up sees its own imports."""
        ...

    def converted(self) -> bool:
        """This file is converted by the run (not only summarised for another file)."""
        ...

    def names_project_module(self, head: str) -> bool:
        """``head`` names a folder holding Python files or a ``.py`` of the project where the
        file's absolute imports are searched: ``train.train_x`` is the project's even when that
        module file is missing."""
        ...

    def owns(self, callee: str) -> bool:
        """The dotted name ``callee`` (``basicsr.train.train_pipeline``) is the project's own: its
        module defines the name, or its module's head is a module or folder of the project (a copy
        of a library the project carries is converted as its code, not reported as the library)."""
        ...

    def leaves_out_imports(self, data: bytes) -> bool:
        """This file is converted by the run and imports project modules the run does not
        convert (a quick textual scan): a file that names no torch is read then too, for
        what it uses of them (pycls's tools/run_net.py hands on ``trainer.train_model``)."""
        ...

    def imported_in_run(self) -> bool:
        """Another file of the run imports this one (its loops may drive this file's steps)."""
        ...

    def imports_a_training_step(self, data: bytes) -> bool:
        """This file imports a project module that takes a training step (a quick textual
        scan): a file that names no torch is read then too, for the loop that drives it
        (SPADE's train.py calls ``trainer.run_one_step(batch)``)."""
        ...

    def imported_by_fsdp(self) -> bool:
        """A file of the run that wraps a model in FSDP imports this one (it may hand this
        file's functions the optimizer of a sharded model)."""
        ...

    def star_names(self, module: str) -> StarNames | None:
        """What ``from module import *`` binds in this file (project/star_names.py); None when
        the module is no project file the tool can read."""
        ...

    def module_read_in_run(self) -> str | None:
        """Another file of the run reads ``.module`` on something (a quick textual scan): the
        first such, as findings name it (a wrapper this file keeps on an attribute may be read there)."""
        ...

    def rank_guarded_in_run(self) -> frozenset[str]:
        """Names that other files of the run call under a rank check (``if rank == 0:
        utils.save_checkpoint(...)``), for this file's callables of those names."""
        ...

    def own_cuda_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        """What the run's other files hand the class ``name`` of this file at its ``__init__``'s
        parameter (``index`` without self, or by keyword), where that class defines its own ``cuda``:
        (the class of an instance of a project class with its own ``cuda`` method, "" for anything
        else; the path of that class's module where this run does not convert it, else "")."""
        ...

    def index_attributes_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        """What the run's other files hand the callable ``name`` of this file at its parameter (``index``
        without self, or by keyword) whose attributes are CUDA indices there (``args`` of ``Net(args)``,
        ``"cuda:" + str(args.device)`` there): (that file as findings name it, the attribute)."""
        ...

    def wrapper_handed(self, name: str, index: int, parameter: str) -> bool:
        """The run's other files hand the callable ``name`` of this file, at its parameter (``index``
        without self, or by keyword), optimizer wrappers of the project only (project/handed_wrappers.py):
        at least one, and nothing else known as an optimizer."""
        ...

    def launched_importer(self, requested: bool) -> tuple[str, bool | None] | None:
        """A file of the run that imports this one and is started once per XLA device (True; with
        ``requested``, ``convert --distributed``, also a one-device script it starts so), or
        whose summary cannot be read (None), as findings show it; None: no importer of the run is."""
        ...

    def launched_in_run(self) -> str | None:
        """A file of the run (not this one) whose processes are started once per XLA device
        (torch_xla.launch or xmp.spawn, as written or as the port writes them), as findings show it."""
        ...

    def neighbours(self) -> tuple[str, ...]:
        """The modules of the file's own folder (what ``__import__(name)`` with a name known
        only at run time may load, the script's folder being first on sys.path)."""
        ...

    def own_module(self) -> str | None:
        """The module name that the file's own folder gives it (``train`` for train.py: what
        ``from train import Workspace`` in it imports when it runs as a script, its folder
        first on sys.path); None where the file's name is not known."""
        ...

    def config_file(self, relative: str) -> tuple[str, str] | None:
        """A config file (YAML) that the file names by a path relative to its own folder, as
        Hydra finds ``config_path``: (its path as findings name it, its text); None where there
        is none the tool can read."""
        ...

    def project_config_files(self) -> tuple[tuple[str, str], ...]:
        """The project's YAML config files, wherever they are (path as findings name it, text):
        what a config whose file is chosen at run time (``--cfg-path``) may be; none without a
        project."""
        ...

    def arguments_without_optim(self) -> str | None:
        """The ``training_args.py`` of a transformers copy the project ships (the one its scripts
        import) whose TrainingArguments has no ``optim`` field (transformers < 4.x), as findings name
        it; None where it ships none such, or the project is not known (project/vendored.py)."""
        ...

    def named_methods(self, name: str, nested: bool = False) -> tuple[Found, ...]:
        """The methods named ``name`` of the project's classes (outside its test files) that take
        a training step or run a training loop (``SRModel.optimize_parameters``): what calling
        ``x.name(...)`` may run where the tool cannot tell the class of ``x``; ``nested``: those of
        classes defined in a class too (``Algorithm.Optimizer.step``)."""
        ...

    def others_in_run(self) -> bool:
        """The run converts files other than this one."""
        ...

    def test_file(self) -> bool:
        """The file is a test (``tests/``, ``test_*.py``, ``*_test.py``): a call of its own is
        no loop that drives a step."""
        ...

    def loadable_modules(self, package: str) -> tuple[str, ...]:
        """The project modules that ``importlib.import_module(f"{package}.{name}")`` may load
        from this file (``package`` "": ``import_module(name)``), as dotted names its imports
        resolve: the modules and packages of the first folder named ``package`` under the
        folders its imports search (its own folder first) and those it puts on ``sys.path``;
        the file itself left out."""
        ...

    def mentioned_elsewhere(self, name: str) -> bool | None:
        """Whether another file of the project names ``name`` as a word (a quick textual scan:
        a call, an import, a registry's string); None: the project's files are not known."""
        ...

    def mentioned_outside(self, path: str, name: str) -> bool | None:
        """Whether a file of the project other than ``path`` (as findings name it) names ``name``
        as a word, this file included; None: the project's files are not known."""
        ...

    def cuda_checked(self, attribute: str, handed: bool = False) -> str | None:
        """The project file that sets ``self.<attribute>`` only to ``torch.cuda.is_available()``
        (a config class's ``self.train_on_gpu``), as findings name it; None: none, or not known.
        With ``handed``: another file that sets ``<name>.<attribute>`` (a namespace it hands on:
        ``hyp_params.use_cuda = use_cuda``) and calls ``torch.cuda.is_available()``."""
        ...

    def host_written(self, paths: frozenset[tuple[str, tuple[str, ...] | None]]) -> bool | None:
        """Whether every ``torch.save`` of the project that may write one of ``paths`` (an attribute
        chain, ``form.target.mag`` of ``hp.form.target.mag``, and the literals naming the file beyond it)
        saves host data (checkpoint/written_files.py); None: none does, or the project's files are not
        known."""
        ...

    def built_extensions(self) -> tuple[tuple[str, str], ...]:
        """The C++/CUDA extension modules the project's ``setup.py`` files build with
        torch.utils.cpp_extension (``CUDAExtension(name="pointnet2._ext", ...)``,
        ``CppExtension``): (the module's dotted name, the setup file as findings name it)."""
        ...

    def launchers(self) -> tuple[tuple[str, str], ...]:
        """The shell scripts that name the file (``run.sh``'s ``python train.py --accelerator
        gpu``), looked for in the file's folder, the project's root and the ``scripts/`` folder
        of each, and taken when a path they give leads to the file (from the script's folder or
        the root): (their paths as findings name them, their lines that name it, continuation
        lines joined)."""
        ...


class OwnsByLookup:
    """``ImportContext.owns``, from the context's ``lookup`` and ``names_project_module`` (one
    decision for every rule that asks whether a library's name is the project's own copy)."""

    def owns(self: ImportContext, callee: str) -> bool:
        module, _, name = callee.rpartition(".")
        return self.lookup(module, name) is not None or self.names_project_module(module)


# Packages that are never part of the project being converted.
_OUTSIDE = frozenset(
    {
        "torch",
        "torch_xla",
        "torchvision",
        "torchaudio",
        "torchtext",
        "numpy",
        "scipy",
        "pandas",
        "sklearn",
        "transformers",
        "datasets",
        "accelerate",
        "timm",
        "apex",
        "deepspeed",
        "lightning",
        "pytorch_lightning",
        "tqdm",
        "wandb",
        "tensorboard",
        "tensorboardX",
        "yaml",
        "PIL",
        "cv2",
        "matplotlib",
        "sagemaker",
        "smdistributed",
        "einops",
        "tokenizers",
        "safetensors",
        "huggingface_hub",
        "omegaconf",
        "hydra",
        "colossalai",
        # Training libraries that run the steps themselves (XLA307 names what they are handed).
        "poutyne",
        "composer",
        "torchbearer",
        "skorch",
        "catalyst",
        "fastai",
        "ignite",
        "torchnet",
    }
) | frozenset(LIBRARY_LOOP_PACKAGES)  # mmcv, basicsr and the like: library_apis.LIBRARY_LOOPS


class GuessedImports(OwnsByLookup):
    """Without the file's location: a module that is neither the standard library nor a
    well-known package is taken for a project module that could not be read."""

    def lookup(self, module: str, name: str) -> Found | None:
        head = module.lstrip(".").split(".")[0]
        if not module.startswith(".") and (head in sys.stdlib_module_names or head in _OUTSIDE):
            return None
        return Found(None, name)

    def lookup_from(self, summary: ModuleSummary, module: str, name: str) -> Found | None:
        return None  # no module of the project is read

    def names_project_module(self, head: str) -> bool:
        return False  # (lookup takes any such name for the project's)

    def converted(self) -> bool:
        return True

    def leaves_out_imports(self, data: bytes) -> bool:
        return False

    def imported_in_run(self) -> bool:
        return False

    def imports_a_training_step(self, data: bytes) -> bool:
        return False

    def imported_by_fsdp(self) -> bool:
        return False

    def star_names(self, module: str) -> StarNames | None:
        return None  # no module of the project is read

    def module_read_in_run(self) -> str | None:
        return None

    def rank_guarded_in_run(self) -> frozenset[str]:
        return frozenset()

    def launched_importer(self, requested: bool) -> tuple[str, bool | None] | None:
        return None

    def launched_in_run(self) -> str | None:
        return None  # the run's files are not known

    def own_cuda_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        return ()

    def index_attributes_handed(self, name: str, index: int, parameter: str) -> tuple[tuple[str, str], ...]:
        return ()

    def wrapper_handed(self, name: str, index: int, parameter: str) -> bool:
        return False

    def neighbours(self) -> tuple[str, ...]:
        return ()

    def own_module(self) -> str | None:
        return None  # the file's name is not known

    def config_file(self, relative: str) -> tuple[str, str] | None:
        return None  # the file's folder is not known

    def project_config_files(self) -> tuple[tuple[str, str], ...]:
        return ()  # the project is not known

    def arguments_without_optim(self) -> str | None:
        return None  # the project is not known: the installed transformers

    def named_methods(self, name: str, nested: bool = False) -> tuple[Found, ...]:
        return ()  # no module of the project is read

    def others_in_run(self) -> bool:
        return False  # the run's files are not known

    def test_file(self) -> bool:
        return False  # the file's name is not known

    def launchers(self) -> tuple[tuple[str, str], ...]:
        return ()  # the file's folder is not known

    def cuda_checked(self, attribute: str, handed: bool = False) -> str | None:
        return None  # the project's files are not known

    def host_written(self, paths: frozenset[tuple[str, tuple[str, ...] | None]]) -> bool | None:
        return None  # the project's files are not known

    def built_extensions(self) -> tuple[tuple[str, str], ...]:
        return ()  # the project's files are not known

    def mentioned_elsewhere(self, name: str) -> bool | None:
        return None  # the project's files are not known

    def mentioned_outside(self, path: str, name: str) -> bool | None:
        return None  # the project's files are not known

    def loadable_modules(self, package: str) -> tuple[str, ...]:
        return ()  # the file's folder is not known


# torch, torch_xla and the packages of torch's family that are never a project's own code;
# a project package whose name merely starts with "torch" (``torchreid``, ``torch_utils``) is
# looked up like any other.
TORCH_FAMILY = frozenset(
    {
        "torch",
        "torch_xla",
        "torchvision",
        "torchaudio",
        "torchtext",
        "torchdata",
        "torchrec",
        "torchtune",
        "torchao",
        "torchmetrics",
        "torch_geometric",
        "torch_scatter",
        "torch_sparse",
    }
)


def is_test_path(path: str) -> bool:
    """A test file, by its path as written (``tests/test_models.py``, ``test_x.py``, ``x_test.py``)."""
    *folders, name = path.replace("\\", "/").split("/")
    return name.startswith("test_") or name.endswith("_test.py") or any(f in ("tests", "test") for f in folders)


def outside_project(module: str) -> bool:
    """torch, torch_xla and their family are never the project."""
    return module.split(".")[0] in TORCH_FAMILY
