"""The packages whose device, model, data and step behaviour the tool follows, and the test for
the rest (read as ``apis.FOLLOWED_PACKAGES`` and ``apis.unfollowed_package``)."""

from __future__ import annotations

import sys

# Packages whose device, model, data and step behaviour the tool knows: torch's own family,
# the XLA-aware frameworks the concerns port (Transformers, Accelerate, Lightning), and packages
# that never choose a device or drive a training step (numerics, I/O, logging, configs).  A value
# that comes from any other package (``mmengine.device.get_device()``, a library's ``fit``) is
# one the tool cannot follow: the obligations report it rather than take it as proven.
FOLLOWED_PACKAGES = frozenset(
    {
        "torch",
        "torch_xla",
        "torchvision",
        "torchaudio",
        "torchtext",
        "transformers",
        "accelerate",
        "lightning",
        "pytorch_lightning",
        "lightning_fabric",
        "numpy",
        "scipy",
        "pandas",
        "sklearn",
        "tqdm",
        "rich",
        "wandb",
        "tensorboard",
        "tensorboardX",
        "mlflow",
        "yaml",
        "json5",
        "toml",
        "PIL",
        "cv2",
        "imageio",
        "skimage",
        "matplotlib",
        "seaborn",
        "einops",
        "tokenizers",
        "sentencepiece",
        "tiktoken",
        "safetensors",
        "huggingface_hub",
        "datasets",
        "omegaconf",
        "hydra",
        "absl",
        "fire",
        "click",
        "typer",
        "h5py",
        "librosa",
        "soundfile",
        "gym",
        "gymnasium",
        "networkx",
    }
)


def unfollowed_package(qualified: str | None) -> str | None:
    """The package of ``qualified`` (a resolved callee, ``mmengine.device.get_device``) when it
    is neither the standard library nor one of FOLLOWED_PACKAGES: the tool does not know what
    it does on an XLA host.  None for a name that resolves to nothing.  A module of the project
    resolves too (``utils.get_device``): callers ask ProjectAnalysis.origin first."""
    if not qualified or qualified.startswith("."):
        return None
    head = qualified.split(".", 1)[0]
    if head in sys.stdlib_module_names or head in FOLLOWED_PACKAGES or head == "builtins":
        return None
    return head
