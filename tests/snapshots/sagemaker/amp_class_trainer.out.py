"""A trainer class that keeps its scaler in an attribute and hands it to a helper."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.amp
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm


def backward_and_step(loss, optimizer, scaler, max_norm, parameters):
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(parameters, max_norm)
    scaler.step(optimizer)
    scaler.update()


class Trainer:
    def __init__(self, model, loader, lr, gpu_id):
        self.gpu_id = gpu_id
        self.model = model.to(gpu_id)
        self.loader = loader
        self.optimizer = syncfree.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.scaler = torch_xla.amp.GradScaler()
        self.step = 0

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        with torch_xla.amp.autocast(xm.xla_device()):
            output = self.model(source)
            loss = nn.functional.cross_entropy(output, targets)
        backward_and_step(loss, self.optimizer, self.scaler, 1.0, self.model.parameters())
        return loss

    def train(self, epochs):
        for _ in range(epochs):
            for source, targets in self.loader:
                source = source.to(self.gpu_id)
                targets = targets.to(self.gpu_id)
                loss = self._run_batch(source, targets)
                xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(self.step, loss))
                self.step += 1
                xm.mark_step()


def main():
    torch.manual_seed(11)
    data = TensorDataset(torch.randn(64, 24), torch.randint(0, 5, (64,)))
    loader = DataLoader(data, batch_size=8, shuffle=False)
    model = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 5))
    device = xm.xla_device()
    trainer = Trainer(model, loader, lr=0.05, gpu_id=device)
    trainer.train(epochs=2)


if __name__ == "__main__":
    main()
