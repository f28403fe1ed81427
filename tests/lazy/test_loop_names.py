"""What XLA303 calls the loop it ends with the step barrier (held-out list 19): an evaluation loop
only where it iterates a loader or a data set; a decoder's per-token loop (kospeech's beam search,
``for di in range(max_length)``) or a loop over a batch's targets (an RRPN's label matching) is a
loop.  A call that hands on a lambda reading to the host (torchbeast's ``nest.map(lambda t:
t.cpu(), outputs)``) reads every iteration: that loop gets no barrier."""

from __future__ import annotations

import pytest

from codemods import convert_source
from codemods.training.rules.host_read_loop_cases import _DECODE, _LAMBDA_READ


def _messages(source: str, target: str) -> list[str]:
    return [f.message for f in convert_source(source, target=target).findings if f.rule == "XLA303"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_loop_over_no_data_is_no_evaluation_loop(target: str) -> None:
    (message,) = _messages(_DECODE, target)
    assert message.startswith("loop over the device (no call in every iteration reads"), message
    evaluation = _DECODE.replace("for di in range(max_length):", "for di in test_loader:")
    (message,) = _messages(evaluation, target)  # (a control: the same loop over a loader)
    assert message.startswith("evaluation loop over the device (no call"), message


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_lambda_a_call_applies_reads_to_the_host(target: str) -> None:
    source = _LAMBDA_READ.replace("import torch_xla\n", "").replace("torch_xla.device()", 'torch.device("cuda")')
    assert _messages(source, target) == []
    (message,) = _messages(source.replace("t.cpu()", "t.float()"), target)  # (a control: no read)
    assert message.startswith("evaluation loop over the device"), message
    converted = str(convert_source(source, target=target).output)
    assert convert_source(converted, target=target).output == converted
