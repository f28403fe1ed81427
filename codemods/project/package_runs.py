"""The folder a script inside a package runs from when its imports name its own package's
siblings: ``src/laion_clap/training/main.py`` with ``from training.train import train_one_epoch``
and ``from clap_module import create_model``, started as ``cd src/laion_clap && python -m
training.main``.  Python puts that folder (above the script's package) on sys.path, so its
imports are ``src/laion_clap/training/train.py`` and ``src/laion_clap/clap_module/``, though
``src/laion_clap`` is itself a package (``__init__.py``) that the root's search never enters."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codemods.project.project_files import ProjectFiles
from codemods.project.roots import is_package


def package_run_folder(project: ProjectFiles, path: Path, wanted: Sequence[str]) -> Path | None:
    """The nearest folder above a package that holds the script at ``path`` (climbing package
    by package, inside the project's root) where a module of ``wanted`` (absolute imports
    the script finds nowhere else) is; None: no such folder.  A script whose folder is no
    package runs from its own folder, searched already; the climb stops below ``<root>/src``."""
    folder = path.parent
    while folder != project.root and folder.is_relative_to(project.root) and is_package(folder):
        above = folder.parent
        if above == project.root / "src":
            # A src layout is searched already; a ``src`` package is the root's (``from src.pkg import x``).
            break
        for module in wanted:
            file = project.module_file_at(above, tuple(module.split(".")))
            if file is not None and project.contains(file) and file != path:
                return above
        folder = above
    return None
