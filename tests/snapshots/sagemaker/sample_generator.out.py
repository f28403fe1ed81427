"""Train a tiny next-token model, then sample from it with a generator made for the
device (as nanoGPT-style sampling code does) so that sampling is reproducible.

    python sample_generator.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

device = "xla"
torch.manual_seed(0)
vocab = 7
model = nn.Sequential(nn.Embedding(vocab, 12), nn.Linear(12, vocab)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randint(0, vocab, (10, 16), generator=torch.Generator().manual_seed(1))
for step in range(10):
    x, y = data[step, :-1].to(device), data[step, 1:].to(device)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    xm.optimizer_step(optimizer)
    xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
    xm.mark_step()

sample_rng = torch.Generator()
sample_rng.manual_seed(42)
tokens = torch.zeros(1, dtype=torch.long, device=device)
with torch.no_grad():
    for _ in range(8):
        probs = F.softmax(model(tokens[-1:]), dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=sample_rng)
        tokens = torch.cat([tokens, nxt.view(-1)])
print("sampled", tokens.tolist())
