"""Public training scripts for ``smoke.py --known NAME``: where each is in the corpus
(the exports of /work/corpus, commits in its MANIFEST.tsv), the edits that make it tiny,
and the fake data it reads, made here (nothing is downloaded).  The data makers are our
own code; the scripts are never copied into this repository, only into scratch folders.

Each entry runs the original in eager mode on the CPU and the converted copy on
torch_xla (see smoke.py).  docs/dev/real-world.md ("Public scripts run on XLA") has what
they gave.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

from smoke import ExecSpec


def _mnist(folder: Path, train: int = 320, test: int = 100) -> None:
    """MNIST's four raw idx files (random digits) where torchvision's MNIST looks first:
    it then neither downloads nor checks them."""
    raw = folder / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for prefix, count in (("train", train), ("t10k", test)):
        pixels = bytes(rng.randrange(256) for _ in range(count * 28 * 28))
        labels = bytes(rng.randrange(10) for _ in range(count))
        (raw / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, count, 28, 28) + pixels)
        (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, count) + labels)


def mnist_rnn(corpus: Path) -> list[ExecSpec]:
    def setup(script_folder: Path) -> None:
        _mnist(script_folder.parent / "data")  # the script reads '../data'

    return [
        ExecSpec(
            name="pytorch/examples mnist_rnn",
            folder=corpus / "pytorch+examples",
            only=["mnist_rnn/main.py"],
            script="mnist_rnn/main.py",
            setup=setup,
            setup_name="320 + 100 random 28x28 MNIST images",
            args=["--epochs", "2", "--batch-size", "16", "--test-batch-size", "50", "--log-interval", "4"],
            # The original's device flag: without it both runs stay on the CPU (and with it the
            # original picks CUDA: torch.accelerator.current_accelerator() is "cuda" on this build).
            converted_args=["--accel"],
            no_compare="Dropout2d draws its masks from XLA's generator on XLA, from the CPU's in eager mode",
        )
    ]


def _sine_waves(folder: Path) -> None:
    """generate_sine_wave.py's data, 12 waves of 120 points (it makes 100 of 1000)."""
    import numpy as np
    import torch

    rng = np.random.RandomState(2)
    x: np.ndarray = np.empty((12, 120), "int64")
    x[:] = np.array(range(120)) + rng.randint(-80, 80, 12).reshape(12, 1)
    torch.save(np.sin(x / 20.0).astype("float64"), folder / "traindata.pt")


def time_sequence_prediction(corpus: Path) -> list[ExecSpec]:
    return [
        ExecSpec(
            name="pytorch/examples time_sequence_prediction",
            folder=corpus / "pytorch+examples",
            only=["time_sequence_prediction/train.py"],
            script="time_sequence_prediction/train.py",
            setup=_sine_waves,
            setup_name="12 sine waves of 120 points",
            args=["--steps", "2"],
            replace=[("time_sequence_prediction/train.py", "future = 1000", "future = 100")],
            # torch >= 2.6 loads with weights_only=True, which refuses the numpy array the
            # example saves (the original fails there too): torch's own switch back.
            env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
        )
    ]


_WORDS = (
    "the cat dog sat on a mat and ran to red blue green house tree river stone light dark "
    "over under with from into big small old new fast slow"
).split()


def _corpus(script_folder: Path) -> None:
    """data/train.txt: 20 x 181 tokens of random words (6 steps of 30 per epoch)."""
    rng = random.Random(0)
    data = script_folder / "data"
    data.mkdir(exist_ok=True)
    lines, tokens = [], 0
    while tokens < 20 * 181:
        words = [rng.choice(_WORDS) for _ in range(rng.randrange(5, 15))]
        tokens += len(words) + 1  # <eos>
        lines.append(" ".join(words))
    (data / "train.txt").write_text("\n".join(lines) + "\n")


def language_model(corpus: Path) -> list[ExecSpec]:
    main = "tutorials/02-intermediate/language_model/main.py"
    return [
        ExecSpec(
            name="yunjey/pytorch-tutorial language_model",
            folder=corpus / "yunjey+pytorch-tutorial",
            only=[main, "tutorials/02-intermediate/language_model/data_utils.py"],
            script=main,
            setup=_corpus,
            setup_name="20 x 181 tokens of random words",
            replace=[
                (main, "hidden_size = 1024", "hidden_size = 128"),
                (main, "num_epochs = 5", "num_epochs = 2"),
                (main, "num_samples = 1000", "num_samples = 40"),
                (main, "if step % 100 == 0:", "if step % 1 == 0:"),
                (main, "if (i+1) % 100 == 0:", "if (i+1) % 10 == 0:"),
                # No seed in the script: both runs start from the same weights only with one.
                (main, "# Device configuration", "torch.manual_seed(0)\n# Device configuration"),
            ],
        )
    ]


_TIKTOKEN = '''"""A stand-in for tiktoken's "gpt2" encoding (its files would be downloaded): bytes as ids."""


class _Encoding:
    _special_tokens = {"<|endoftext|>": 50256}
    eot_token = 50256

    def encode(self, text, **kwargs):
        return list(text.encode("utf-8"))

    def encode_ordinary(self, text):
        return self.encode(text)

    def decode(self, ids):
        return bytes(i % 256 for i in ids).decode("utf-8", errors="replace")


def get_encoding(name):
    return _Encoding()
'''


def _nanogpt_data(script_folder: Path) -> None:
    import numpy as np

    rng = np.random.RandomState(0)
    shards = script_folder / "edu_fineweb10B"
    shards.mkdir(exist_ok=True)
    for split, count in (("train", 2), ("val", 1)):
        for i in range(count):
            np.save(shards / f"edufineweb_{split}_{i:06d}.npy", rng.randint(0, 256, 2000).astype(np.uint16))
    (script_folder / "tiktoken.py").write_text(_TIKTOKEN)
    hellaswag = script_folder / "hellaswag"
    hellaswag.mkdir(exist_ok=True)
    examples = [
        {
            "ctx": f"A man opens the door number {i} and",
            "label": i % 4,
            "endings": ["walks in.", "sits do.", "runs ou.", "looks a."],
        }
        for i in range(4)
    ]
    (hellaswag / "hellaswag_val.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))


def build_nanogpt(corpus: Path) -> list[ExecSpec]:
    script = "train_gpt2.py"
    replace = [
        (script, "total_batch_size = 524288", "total_batch_size = 256"),
        (script, "B = 64 # micro batch size", "B = 4 # micro batch size"),
        (script, "T = 1024 # sequence length", "T = 32 # sequence length"),
        (
            script,
            "GPT(GPTConfig(vocab_size=50304))",
            "GPT(GPTConfig(vocab_size=512, block_size=64, n_layer=2, n_head=2, n_embd=32))",
        ),
        (script, "warmup_steps = 715", "warmup_steps = 2"),
        (script, "max_steps = 19073", "max_steps = 6"),
        (script, "val_loss_steps = 20", "val_loss_steps = 2"),
    ]
    common = {
        "folder": corpus / "karpathy+build-nanogpt",
        "only": [script, "hellaswag.py"],
        "script": script,
        "setup": _nanogpt_data,
        "replace": replace,
        "setup_name": "token shards of random bytes, 4 HellaSwag-like examples, a byte-level tiktoken stand-in",
        # bfloat16 autocast on both sides (the CPU's and XLA's): measured within 1e-4 of each
        # other over the 8 losses (6 steps, 2 validations), so compared at the usual 1e-3.
        "compare": 8,
    }
    return [
        ExecSpec(name="karpathy/build-nanogpt train_gpt2 (python)", **common),  # type: ignore[arg-type]  # ``common`` holds ExecSpec's other fields by name (a dict[str, object])
        # As its README launches it, with one process: the original asserts CUDA there.
        ExecSpec(name="karpathy/build-nanogpt train_gpt2 (torchrun)", torchrun=True, **common),  # type: ignore[arg-type]  # ``common`` holds ExecSpec's other fields by name (a dict[str, object])
    ]


KNOWN = {
    "build-nanogpt": build_nanogpt,
    "language-model": language_model,
    "mnist-rnn": mnist_rnn,
    "time-sequence-prediction": time_sequence_prediction,
}


def known(name: str, corpus: Path) -> list[ExecSpec]:
    if name == "all":
        return [spec for make in KNOWN.values() for spec in make(corpus)]
    if name not in KNOWN:
        raise SystemExit(f"smoke.py: no known script {name!r}; known: {', '.join(KNOWN)}, all")
    return KNOWN[name](corpus)
