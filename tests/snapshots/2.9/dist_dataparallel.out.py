"""One process driving every visible GPU with nn.DataParallel, as in the PyTorch
"Optional: Data Parallelism" tutorial; the checkpoint unwraps model.module so that it
loads on one device.  On the CPU DataParallel simply runs the module.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

input_size = 5
output_size = 2
batch_size = 30
data_size = 300

device = torch_xla.device()


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)
        self.target = self.data[:, :output_size] * 2 - 1

    def __getitem__(self, index):
        return self.data[index], self.target[index]

    def __len__(self):
        return self.len


class Model(nn.Module):
    # Our model

    def __init__(self, input_size, output_size):
        super(Model, self).__init__()
        self.fc = nn.Linear(input_size, output_size)

    def forward(self, input):
        output = self.fc(input)
        print("\tIn Model: input size", input.size(), "output size", output.size())
        return output


def main():
    torch.manual_seed(0)
    rand_loader = DataLoader(dataset=RandomDataset(input_size, data_size), batch_size=batch_size, shuffle=True)

    model = Model(input_size, output_size)
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
        # dim = 0 [30, xxx] -> [10, ...], [10, ...], [10, ...] on 3 GPUs
        pass
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    step = 0
    for epoch in range(2):
        for inputs, targets in pl.MpDeviceLoader(rand_loader, device):
            inputs, targets = inputs.to(device), targets.to(device)
            output = model(inputs)
            loss = nn.functional.mse_loss(output, targets)
            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda step, loss: print("step {} loss {:.6e}".format(step, loss.item())), args=(step, loss))
            step += 1

    xm.save(model.state_dict() if hasattr(model, "module") else model.state_dict(), "dp_model.pt")


if __name__ == "__main__":
    main()
