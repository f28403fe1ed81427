"""The shapes of config code and config files the config-device analysis (config_devices.py)
reads: which keys name a device, a config read as a dotted chain, the file Hydra or a script
loads, and the project's config files that set a device key to CUDA."""

from __future__ import annotations

import functools

import libcst as cst

from codemods.device.yaml_values import scalars_at
from codemods.engine.nodes import arg_value, dotted, method_name, string_value

OFF_XLA = ("cuda", "mps")
CONFIGS_NAMED = 2  # the project's config files a finding names


@functools.lru_cache(maxsize=16)
def off_xla_configs(configs: tuple[tuple[str, str], ...], key: str) -> tuple[tuple[str, str, str, int], ...]:
    """The project's config files that set ``key`` (at any depth: ``run: {device: cuda}``) to a
    CUDA or MPS device: (file, the key as written, value, line), one per file.  Computed once
    per run and key (every file of a run is handed the same configs)."""
    found = []
    for path, text in configs:
        for keys, value, line in scalars_at(text, key):
            if value.split(":")[0].lower() in OFF_XLA:
                found.append((path, ".".join(keys), value, line))
                break
    return tuple(found)


def named_off_xla_configs(configs: tuple[tuple[str, str, str, int], ...], key: str) -> str:
    """``3 of the project's config files set `device` to CUDA (a.yaml: `run.device: cuda`, line 5; ...)``."""
    named = "; ".join(f"{path}: `{keys}: {value}`, line {line}" for path, keys, value, line in configs[:CONFIGS_NAMED])
    more = ", among others" if len(configs) > CONFIGS_NAMED else ""
    sets = "sets" if len(configs) == 1 else "set"
    return f"{len(configs)} of the project's config files {sets} `{key}` to a CUDA device ({named}{more})"


def hydra_path(call: cst.Call) -> str | None:
    """The config file ``@hydra.main(...)`` loads, relative to the script's folder: its
    ``config_path`` (a file, in Hydra before 1.0, or a folder) joined with ``config_name``."""
    folder = arg_value(call, 0, "config_path")
    name = arg_value(call, 1, "config_name")
    folder_text = string_value(folder) if folder is not None else ""
    name_text = string_value(name) if name is not None else ""
    if folder_text is None or name_text is None:
        return None
    if not name_text:
        return folder_text if folder_text.endswith((".yaml", ".yml")) else None
    name_text = name_text if name_text.endswith((".yaml", ".yml")) else f"{name_text}.yaml"
    return "/".join(p.strip("/") for p in (folder_text, name_text) if p.strip("/") not in ("", "."))


def beside_the_script(stream: cst.BaseExpression) -> str | None:
    """``(Path(sys.argv[0]).parent / "configs.yaml").read_text()``, ``open(Path(__file__).parent /
    "c.yaml")``: a file beside the script, by its name; None for any other stream."""
    if type(stream) is cst.Call and method_name(stream) == "read_text" and type(stream.func) is cst.Attribute:
        stream = stream.func.value
    elif type(stream) is cst.Call and dotted(stream.func) == "open" and (first := arg_value(stream, 0, "file")):
        stream = first
    if type(stream) is not cst.BinaryOperation or type(stream.operator) is not cst.Divide:
        return None
    name = string_value(stream.right)
    base = cst.Module([]).code_for_node(stream.left)
    if name is None or not ("__file__" in base or "sys.argv[0]" in base) or ".parent" not in base:
        return None
    return name


def device_key(key: str) -> bool:
    """A config key that names a device (``device``, ``train_device``), not a ``device_map``."""
    return key in ("device", "dev") or key.endswith("_device")


def read_key(key: str) -> bool:
    """A config key whose read the analysis follows: a device, or an accelerator
    (``accelerator: gpu``), which is reported only where the config is read and names CUDA."""
    return device_key(key) or key == "accelerator" or key.endswith("_accelerator")


def index_key(node: cst.Subscript) -> str | None:
    """``cfg["device"]``: the key, a string; None for any other index."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return None
    return string_value(node.slice[0].slice.value)


def config_chain(node: cst.BaseExpression) -> str | None:
    """A read of a config as a dotted chain: ``cfg.train.device``, ``cfg["train"]["device"]``
    and ``cfg.get("train").get("device")`` are all ``cfg.train.device``."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = config_chain(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    if type(node) is cst.Subscript:
        key = index_key(node)
        base = config_chain(node.value)
        return f"{base}.{key}" if key is not None and base is not None else None
    if type(node) is cst.Call and method_name(node) == "get" and type(node.func) is cst.Attribute:
        key = string_value(arg_value(node, 0, "key"))
        base = config_chain(node.func.value)
        return f"{base}.{key}" if key is not None and base is not None else None
    return None
