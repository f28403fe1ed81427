"""Training and evaluation loops; the backward pass and the step happen in the scaler."""
import torch
import torch.nn.functional as F
import torch_xla.amp
import torch_xla.core.xla_model as xm

from utils.lr import adjust_learning_rate


def train_one_epoch(model, loader, optimizer, device, loss_scaler, epoch, epochs, base_lr, step):
    model.train()
    for i, (samples, targets) in enumerate(loader):
        adjust_learning_rate(optimizer, (epoch + i / len(loader)) / epochs, base_lr)
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch_xla.amp.autocast(xm.xla_device()):
            loss = F.cross_entropy(model(samples), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        step += 1
        xm.mark_step()
    return step


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    for samples, targets in loader:
        samples, targets = samples.to(device), targets.to(device)
        correct += (model(samples).argmax(1) == targets).sum()
        xm.mark_step()
    return correct.item() / len(loader.dataset)
