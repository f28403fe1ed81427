"""The PyTorch automatic-mixed-precision recipe: autocast for the forward pass, a
GradScaler around backward and the optimizer step (imported from torch.cuda.amp)."""
import torch
import torch.nn as nn
import torch_xla.amp
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(nn.Linear(in_size, in_size))
        layers.append(nn.ReLU())
    layers.append(nn.Linear(in_size, out_size))
    return nn.Sequential(*layers)


def main():
    torch.manual_seed(0)
    device = xm.xla_device()
    batch_size, in_size, out_size, num_layers, num_batches = 32, 64, 16, 3, 12

    data = [torch.randn(batch_size, in_size) for _ in range(num_batches)]
    targets = [torch.randn(batch_size, out_size) for _ in range(num_batches)]
    net = make_model(in_size, out_size, num_layers).to(device)
    opt = syncfree.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    scaler = torch_xla.amp.GradScaler()

    for step, (input, target) in enumerate(zip(data, targets)):
        input, target = input.to(device), target.to(device)
        with torch_xla.amp.autocast(xm.xla_device()):
            output = net(input)
            loss = loss_fn(output.float(), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        xm.mark_step()

    xm.save({"model": net.state_dict(), "scaler": scaler.state_dict()}, "amp_recipe.pt")


if __name__ == "__main__":
    main()
