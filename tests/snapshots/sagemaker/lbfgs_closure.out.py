"""Fit a sine curve with a small MLP using L-BFGS and a closure.

L-BFGS re-evaluates the objective several times per step, so the loss
computation is wrapped in a closure that the optimizer can call.  Its curvature
estimates amplify rounding error, so the fit runs in float64.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser(description='L-BFGS sine regression')
parser.add_argument('--steps', type=int, default=15, help='number of L-BFGS steps')
parser.add_argument('--hidden', type=int, default=16, help='hidden layer width')
parser.add_argument('--num-points', type=int, default=200)
parser.add_argument('--seed', type=int, default=42)
args = parser.parse_args()

torch.manual_seed(args.seed)
torch.set_default_dtype(torch.float64)

device = xm.xla_device()

# Training data: y = sin(x) on [-pi, pi] plus a little noise
x = torch.linspace(-math.pi, math.pi, args.num_points).unsqueeze(1)
y = torch.sin(x) + 0.05 * torch.randn_like(x)
x, y = x.to(device), y.to(device)


class SineNet(nn.Module):
    def __init__(self, hidden=16):
        super(SineNet, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(1, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, inp):
        return self.net(inp)


model = SineNet(args.hidden).to(device)
criterion = nn.MSELoss()
# a short history keeps each step cheap; LBFGS re-evaluates the closure up to max_iter times
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5, history_size=5)

num_steps = args.steps

for i in range(num_steps):
    def closure():
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        xm.mark_step()
        return loss

    # step() returns the loss from the first closure evaluation of this step
    loss = xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
    xm.add_step_closure(lambda i, loss: print("step {} loss {:.6e}".format(i, loss.item())), args=(i, loss))
    xm.mark_step()

# Check the fit on a few points
model.eval()
with torch.no_grad():
    test_x = torch.tensor([[-2.0], [0.0], [1.5]], device=device)
    pred = model(test_x).squeeze(1).cpu()
    for xi, pi in zip(test_x.squeeze(1).tolist(), pred.tolist()):
        print('x=%.2f  pred=%.4f  sin=%.4f' % (xi, pi, math.sin(xi)))

    # mean squared error against the noiseless target
    clean_mse = criterion(model(x), torch.sin(x)).item()
    print('MSE vs. clean sine: %.6f' % clean_mse)

xm.save(model.state_dict(), 'sine_lbfgs.pt')
