"""Mixed-precision training with DataParallel on however many GPUs are visible.

Falls back to full precision on a single device (or CPU) when CUDA is absent.
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class ConvClassifier(nn.Module):
    def __init__(self, num_classes=6):
        super(ConvClassifier, self).__init__()
        self.features = nn.Sequential(
            nn.Conv1d(4, 16, kernel_size=5, padding=2),
            nn.BatchNorm1d(16),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool1d(8),
        )
        self.classifier = nn.Linear(16 * 8, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.flatten(1))


def parse_args():
    parser = argparse.ArgumentParser(description='AMP + DataParallel training')
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--seed', type=int, default=17)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    device = torch_xla.device()
    use_amp = True

    # 1-D "sensor" sequences: 4 channels x 32 timesteps
    signals = torch.randn(192, 4, 32)
    targets = torch.randint(0, 6, (192,))
    train_loader = DataLoader(TensorDataset(signals, targets), batch_size=args.batch_size,
                              shuffle=True, drop_last=True)

    model = ConvClassifier()
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
    model.to(device)

    criterion = nn.CrossEntropyLoss()
    optimizer = syncfree.Adam(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("xla", enabled=use_amp)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for inputs, labels in pl.MpDeviceLoader(train_loader, device):
            inputs = inputs.to(device)
            labels = labels.to(device)

            optimizer.zero_grad()
            with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
                outputs = model(inputs)
                loss = criterion(outputs, labels)

            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            xm.add_step_closure(lambda step, loss: print('step {} loss {:.6e}'.format(step, loss.item())), args=(step, loss))
            step += 1

        print('epoch {} finished, loss scale {}'.format(epoch, scaler.get_scale() if use_amp else 'n/a'))

    # unwrap DataParallel before saving so the checkpoint loads on one device
    state = model.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
    xm.save(state, 'amp_model.pt')


if __name__ == '__main__':
    main()
