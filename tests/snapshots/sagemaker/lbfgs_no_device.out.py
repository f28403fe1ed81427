"""Fit noisy sine waves with L-BFGS on the CPU, in the style of pytorch/examples'
time_sequence_prediction: numpy data, a float64 model, and no device anywhere.

    python lbfgs_no_device.py
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Curve(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(1, 24)
        self.out = nn.Linear(24, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


if __name__ == "__main__":
    np.random.seed(0)
    torch.manual_seed(0)
    xs = np.linspace(-3, 3, 128).reshape(-1, 1)
    data = torch.from_numpy(xs)
    target = torch.from_numpy(np.sin(xs) + 0.05 * np.random.randn(*xs.shape))
    model = Curve()
    model.double()
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(model.parameters(), lr=0.5, history_size=5, max_iter=5)
    for step in range(10):
        def closure():
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            return loss
        loss = optimizer.step(closure)
        print(f"step {step} loss {loss.item():.6e}")
