"""torch.autocast / torch.amp spellings: float16 autocast on "cuda", torch.amp.GradScaler,
a fused AdamW, and gradient clipping on unscaled gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.amp
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def main():
    torch.manual_seed(7)
    device = "xla"
    images = torch.randn(48, 1, 28, 28)
    labels = (images.flatten(1) @ torch.randn(784, 10)).argmax(1)

    model = ConvNet().to(device)
    optimizer = syncfree.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    scaler = torch_xla.amp.GradScaler()

    model.train()
    for step in range(10):
        batch = step % 3  # three batches, seen again and again
        x = images[batch * 16:(batch + 1) * 16].to(device)
        y = labels[batch * 16:(batch + 1) * 16].to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch_xla.amp.autocast(xm.xla_device(), dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        xm.mark_step()


if __name__ == "__main__":
    main()
