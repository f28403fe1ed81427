"""The trainer: it moves the model it is given to its device, then runs the epochs."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, optimizer, data, device):
        self.device = device
        self.model = model.to(device)
        self.optimizer = optimizer
        self.data = data
        self.step = 0

    def run_batch(self, source, targets):
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.model(source, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        xm.optimizer_step(self.optimizer)
        return loss

    def train(self, epochs):
        for epoch in range(epochs):
            for source, targets in self.data:
                source = source.to(self.device)
                targets = targets.to(self.device)
                loss = self.run_batch(source, targets)
                xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(self.step, loss))
                self.step += 1
                torch_xla.sync()
