"""The entry point in the style of MAE's main_pretrain.py: a masked autoencoder (here a
small denoising MLP), AdamW, the AMP loss scaler from util/misc.py, and the training loop
in engine_pretrain.py."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.amp.syncfree as syncfree

import util.misc as misc
from util.misc import NativeScalerWithGradNormCount as NativeScaler
from engine_pretrain import train_one_epoch


class TinyMaskedAutoencoder(nn.Module):
    def __init__(self, dim=32, mask_ratio=0.5):
        super().__init__()
        self.mask_ratio = mask_ratio
        self.encoder = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, 16))
        self.decoder = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x):
        keep = (torch.arange(x.shape[1], device=x.device) % 2 == 0).to(x.dtype)
        pred = self.decoder(self.encoder(x * keep))
        return ((pred.float() - x) ** 2 * (1 - keep)).mean()


def get_args():
    parser = argparse.ArgumentParser('MAE pre-training')
    parser.add_argument('--batch_size', default=16, type=int)
    parser.add_argument('--epochs', default=2, type=int)
    parser.add_argument('--accum_iter', default=2, type=int)
    parser.add_argument('--lr', type=float, default=2e-3)
    parser.add_argument('--min_lr', type=float, default=1e-4)
    parser.add_argument('--warmup_epochs', type=int, default=1)
    parser.add_argument('--output_dir', default='./output_dir')
    parser.add_argument('--device', default='xla')
    return parser.parse_args()


def main(args):
    device = torch.device(args.device)
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(96, 32), torch.zeros(96))
    data_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, drop_last=True)

    model = TinyMaskedAutoencoder()
    model.to(device)
    optimizer = syncfree.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95))
    loss_scaler = NativeScaler()

    os.makedirs(args.output_dir, exist_ok=True)
    step = 0
    for epoch in range(args.epochs):
        step = train_one_epoch(model, data_loader, optimizer, device, epoch, loss_scaler, args=args, step=step)
    misc.save_model(args.output_dir, args.epochs, model, optimizer, loss_scaler)


if __name__ == '__main__':
    main(get_args())
