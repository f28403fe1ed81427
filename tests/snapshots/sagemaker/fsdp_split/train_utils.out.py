"""The training loop of fsdp_split/train.py, in a module of its own (as in the PyTorch
FSDP T5 example's utils/train_utils.py): it does not know that the model is sharded."""
import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, epoch, device):
    model.train()
    for step, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda value, loss: print(f"step {value} loss {loss.item():.6e}"), args=(epoch * len(loader) + step, loss))
        xm.mark_step()
