"""What a finding on a device key of a YAML config says (config_devices.py): where the config
comes from, the key's value and line in the file that sets it (through Hydra's defaults
list), the keys that interpolate it, and what to set there; or that the run could not read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from codemods.device.config_shapes import OFF_XLA, device_key, named_off_xla_configs, off_xla_configs
from codemods.device.yaml_values import hydra_defaults, interpolations_of, is_global_package, yaml_source, yaml_value

if TYPE_CHECKING:
    from codemods.project.import_context import ImportContext

# The section a config's defaults sit under when the script makes its flags from them and
# the device is no top-level key (``defaults: {device: 'cuda:0', ...}`` and named overrides).
_DEFAULTS_SECTION = "defaults"
_OFF_XLA_ACCELERATORS = ("cuda", "mps", "gpu")  # ``accelerator: gpu`` (Lightning's name for CUDA)
_MAX_DEFAULTS_DEPTH = 3  # defaults lists of defaults followed


@dataclass(frozen=True)
class ConfigSource:
    """Where a config comes from: the path the script names (relative to its folder; None
    when not written as a string), whether Hydra loads it (its keys can be set on the
    command line), and the YAML text the script writes itself (``yaml.safe_load(TEXT)``)."""

    path: str | None
    hydra: bool
    text: str | None = None
    # Read through argparse flags made from its keys (``parser.add_argument(f"--{key}",
    # default=value)`` for each key): a key may sit in its defaults section.
    flags: bool = False


def device_message(context: ImportContext, chain: str, key: str, source: ConfigSource) -> str | None:
    """What a finding says of the device key ``key`` that ``chain`` reads from the config
    ``source``; None where the config names no device off the XLA host (or an accelerator key
    cannot be read)."""
    what = "the Hydra config" if source.hydra else "the config"
    override = f" (or run the script with `{key}=xla`)" if source.hydra else ""
    todo = f"set `{key}: xla` there{override}, with torch_xla imported (it registers that device)"
    keys = key.split(".")
    accelerator = not device_key(keys[-1])  # reported only where the config is read and names CUDA
    read: tuple[str, str] | None = None  # (the file as findings name it, its text)
    if source.text is not None:
        what, read = "the YAML text", ("that the script loads", source.text)
    elif source.path is not None:
        read = context.config_file(source.path)
    if read is None and accelerator:
        return None
    if read is None and source.path is None and device_key(keys[-1]):
        configs = off_xla_configs(context.project_config_files(), keys[-1])
        if configs:
            return (
                f"`{chain}` comes from {what} whose file is chosen at run time (a path not written in the code), "
                f"and {named_off_xla_configs(configs, keys[-1])}, which the tool does not rewrite: on an XLA host the script "
                f"asks for a device there is none of; set `{keys[-1]}: xla` in the config files the runs load"
                f"{override or ' (or override it where the run sets its options)'}, with torch_xla imported (it "
                "registers that device)"
            )
    if read is None:
        named = f" {source.path}" if source.path is not None else ""
        return (
            f"`{chain}` comes from {what}{named}, which this run did not read, and the tool does not rewrite "
            f"config files: if it names CUDA (`{key}: cuda`), on an XLA host the script asks for a CUDA device "
            f"there is none of; {todo}"
        )
    path, text = read
    found = yaml_value(text, keys)
    held = yaml_source(text, keys)
    others = ""  # the other keys that interpolate the one that holds the value
    if held is not None and not accelerator:
        reaching = [(k, n) for k, n in interpolations_of(text, held[2]) if k != ".".join(keys)][:3]
        if reaching:
            listed = ", ".join(f"`{k}` (line {n})" for k, n in reaching)
            one = len(reaching) == 1
            others = (
                f"; {listed} {'interpolates' if one else 'interpolate'} it (`${{{'.'.join(held[2])}}}`), so the "
                f"same change reaches {'it' if one else 'them'}"
            )
    if held is not None and held[2] != keys and not accelerator:
        # ``agent: {device: ${device}}`` read as ``cfg.agent.device``: the value is ``device``'s
        holding = ".".join(held[2])
        key = f"{key}`, which is `${{{holding}}}`: `{holding}"
        override = f" (or run the script with `{holding}=xla`)" if source.hydra else ""
        todo = f"set `{holding}: xla` there{override}, with torch_xla imported (it registers that device)"
    if found is None and source.flags and (found := yaml_value(text, [_DEFAULTS_SECTION, *keys])) is not None:
        key = ".".join([_DEFAULTS_SECTION, *keys])
    written, picked = key, ","  # the key as the file that sets it writes it; the defaults entry that picks it
    if found is None and source.hydra:
        composed = _from_defaults(context, source.path or "", text, keys, 0)
        if composed is not None:
            main, (path, found, written, entry) = path, composed
            picked = f", which the defaults list of {main} picks (`{entry}`), and"
    if found is None:
        if accelerator:
            return None
        return (
            f"`{chain}` comes from {what} {path}, which holds no `{key}` the tool can read (a file its defaults "
            f"list names may set it): if it names CUDA, on an XLA host the script asks for a CUDA device there "
            f"is none of; make sure it is `xla`{override}"
        )
    value, line = found
    if value.split(":")[0].lower() not in (_OFF_XLA_ACCELERATORS if accelerator else OFF_XLA):
        return None
    if accelerator:
        todo = f"set `{written}` there to the XLA device's name for what reads it (`xla`, or `tpu` for Lightning)"
    else:
        todo = todo.replace(f"`{key}: xla`", f"`{written}: xla`")
    return (
        f"`{chain}` is `{value}` in {what} {path} (`{written}`, line {line}){picked} which the tool does not "
        f"rewrite: on an XLA host the script asks for a device there is none of; {todo}{others}"
    )


def _from_defaults(
    context: ImportContext, config: str, text: str, keys: list[str], depth: int
) -> tuple[str, tuple[str, int], str, str] | None:
    """A key that Hydra composes into the config from its defaults list
    (``defaults: [trainer: gpu]`` and ``device: cuda`` in trainer/gpu.yaml, read as
    ``cfg.trainer.device``): (the file that sets it, its value and line, the key as that
    file writes it, the defaults entry that picks it)."""
    folder = config.rsplit("/", 1)[0] if "/" in config else ""
    for group, option, _ in hydra_defaults(text):
        relative = f"{group}/{option}" if group is not None else option
        relative = relative if relative.endswith((".yaml", ".yml")) else f"{relative}.yaml"
        path = f"{folder}/{relative}" if folder else relative
        read = context.config_file(path)
        if read is None:
            continue
        package = group.split("/") if group is not None else []
        if group is None or is_global_package(read[1]):
            within = keys
        elif keys[: len(package)] == package:
            within = keys[len(package) :]  # the group's keys sit under its name
        else:
            continue
        found = yaml_value(read[1], within)
        if found is None and depth < _MAX_DEFAULTS_DEPTH:
            deeper = _from_defaults(context, path, read[1], within, depth + 1)
            if deeper is not None:
                return deeper
        if found is not None:
            entry = f"{group}: {option}" if group is not None else option
            return read[0], found, ".".join(within), entry
    return None
