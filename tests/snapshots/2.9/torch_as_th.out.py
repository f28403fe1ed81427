"""Tiny classifier written with short module aliases (th / O / F).

The labels are a deterministic function of the inputs, so the model can
actually learn something in a couple of epochs.
"""
import torch as th
import torch.nn as nn
import torch.optim as O
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

th.manual_seed(7)

dev = torch_xla.device()

N, D_in, H, C = 200, 10, 32, 3


def make_data(n):
    X = th.randn(n, D_in)
    Y = X[:, :C].argmax(dim=1)  # a learnable labelling
    return X, Y


X, Y = make_data(N)
X_valid, Y_valid = make_data(60)
train_dl = DataLoader(TensorDataset(X, Y), batch_size=20, shuffle=True)
valid_dl = DataLoader(TensorDataset(X_valid, Y_valid), batch_size=30)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_in, H)
        self.fc2 = nn.Linear(H, C)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def accuracy(out, yb):
    return (out.argmax(dim=1) == yb).float().mean()


model = Classifier().to(dev)
opt = O.Adam(model.parameters(), lr=1e-3)

n_epochs = 2
step = 0
for epoch in range(n_epochs):
    model.train()
    for xb, yb in pl.MpDeviceLoader(train_dl, dev):
        xb, yb = xb.to(dev), yb.to(dev)
        logits = model(xb)
        loss = F.cross_entropy(logits, yb)

        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)

        xm.add_step_closure(lambda step, loss: print(f'step {step} loss {loss.item():.6e}'), args=(step, loss))
        step += 1

    model.eval()
    with th.no_grad():
        valid_loss = sum(F.cross_entropy(model(xb.to(dev)), yb.to(dev)) for xb, yb in valid_dl)
        valid_acc = accuracy(model(X_valid.to(dev)), Y_valid.to(dev))
    print(f'epoch {epoch}: valid loss {valid_loss.item() / len(valid_dl):.4f} acc {valid_acc.item():.3f}')

xm.save(model.state_dict(), 'model.pt')
