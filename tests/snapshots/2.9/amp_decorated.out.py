"""Autocast as a decorator and in a with statement with another context; a custom
autograd function with custom_fwd/custom_bwd; an optimizer that has no sync-free version."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return 2.0 * y

    @staticmethod
    @torch.amp.custom_bwd(device_type="xla")
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * 2.0 * (1 - y * y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)

    @torch.autocast("xla", dtype=torch.bfloat16)
    def forward(self, x):
        return self.fc2(ScaledTanh.apply(self.fc1(x)))


def main():
    torch.manual_seed(9)
    device = "xla"
    model = Net().to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("xla")
    x_all = torch.randn(120, 10)
    y_all = torch.randint(0, 3, (120,))
    for step in range(10):
        x = x_all[step * 12:(step + 1) * 12].to(device)
        y = y_all[step * 12:(step + 1) * 12].to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        torch_xla.sync()
    with torch.autocast("xla", dtype=torch.bfloat16), torch.no_grad():
        accuracy = (model(x_all.to(device)).argmax(-1) == y_all.to(device)).float().mean()
    print(f"accuracy {accuracy.item():.3f}")


if __name__ == "__main__":
    main()
