"""Small regression net trained with a hand-written SGD update (no optimizer).

Everything the optimizer would normally do is spelled out: zero the grads,
backprop, then move each parameter against its gradient.
"""
import argparse

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser(description='manual SGD')
parser.add_argument('--num-steps', type=int, default=20)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--lr', type=float, default=0.05)
parser.add_argument('--seed', type=int, default=3)
args = parser.parse_args()

torch.manual_seed(args.seed)

device = torch_xla.device()

# hyperparameters
num_steps = args.num_steps
batch_size = args.batch_size
lr = args.lr
in_features, hidden = 8, 16

# synthetic dataset kept in one big tensor; batches are slices of it
X_all = torch.randn(num_steps * batch_size, in_features)
true_w = torch.randn(in_features, 1)
Y_all = torch.tanh(X_all @ true_w) + 0.01 * torch.randn(num_steps * batch_size, 1)

# a held-out set drawn from the same distribution
X_val = torch.randn(64, in_features)
Y_val = torch.tanh(X_val @ true_w)

model = nn.Sequential(
    nn.Linear(in_features, hidden),
    nn.Tanh(),
    nn.Linear(hidden, 1),
)
model = model.to(device)
loss_fn = nn.MSELoss()


def val_loss():
    with torch.no_grad():
        return loss_fn(model(X_val.to(device)), Y_val.to(device)).item()


print('initial validation loss: {:.6f}'.format(val_loss()))

for step in range(num_steps):
    start = step * batch_size
    xb = X_all[start:start + batch_size].to(device)
    yb = Y_all[start:start + batch_size].to(device)

    pred = model(xb)
    loss = loss_fn(pred, yb)

    # backprop, then apply the update by hand
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
            p.grad.zero_()

    xm.add_step_closure(lambda step, loss: print('step {} loss {:.6e}'.format(step, loss.item())), args=(step, loss))
    torch_xla.sync()

# final full-data loss
with torch.no_grad():
    final = loss_fn(model(X_all.to(device)), Y_all.to(device)).item()
print('final loss on all data: {:.6f}'.format(final))
print('final validation loss: {:.6f}'.format(val_loss()))
