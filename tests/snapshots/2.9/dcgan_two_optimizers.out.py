"""DCGAN-style training loop (after pytorch/examples dcgan/main.py).

The convolutional generator/discriminator are replaced by small MLPs and
the image dataset by random 16-dimensional vectors.
"""
from __future__ import print_function
import argparse
import random

import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument('--batchSize', type=int, default=16, help='input batch size')
parser.add_argument('--nz', type=int, default=8, help='size of the latent z vector')
parser.add_argument('--ngf', type=int, default=32)
parser.add_argument('--ndf', type=int, default=32)
parser.add_argument('--niter', type=int, default=2, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.0002, help='learning rate, default=0.0002')
parser.add_argument('--beta1', type=float, default=0.5, help='beta1 for adam. default=0.5')
parser.add_argument('--manualSeed', type=int, default=999, help='manual seed')
opt = parser.parse_args()
print(opt)

random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)

nz = int(opt.nz)
ngf = int(opt.ngf)
ndf = int(opt.ndf)
nx = 16  # "image" size

dataset = torch.utils.data.TensorDataset(torch.randn(96, nx))
dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize,
                                         shuffle=True, num_workers=0)

device = torch_xla.device()


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
        torch.nn.init.zeros_(m.bias)
    elif classname.find('BatchNorm') != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf),
            nn.BatchNorm1d(ngf),
            nn.ReLU(True),
            nn.Linear(ngf, nx),
            nn.Tanh()
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(nx, ndf),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, 1),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


# initialise on the CPU, then move: every run starts from the same weights
netG = Generator()
netG.apply(weights_init)
netG = netG.to(device)
print(netG)

netD = Discriminator()
netD.apply(weights_init)
netD = netD.to(device)
print(netD)

criterion = nn.BCELoss()

# noise is drawn on the CPU so every run sees the same numbers
fixed_noise = torch.randn(opt.batchSize, nz).to(device)
real_label = 1
fake_label = 0

# setup optimizer
optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

step = 0
for epoch in range(opt.niter):
    for i, data in enumerate(dataloader, 0):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        # train with real
        netD.zero_grad()
        real_cpu = data[0].to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label,
                           dtype=real_cpu.dtype, device=device)

        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        # train with fake
        noise = torch.randn(batch_size, nz).to(device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        xm.optimizer_step(optimizerD)

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        xm.optimizer_step(optimizerG)

        xm.add_step_closure(lambda epoch, niter, i, value, errD, D_x, D_G_z1, D_G_z2: print('[%d/%d][%d/%d] Loss_D: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
              % (epoch, niter, i, value,
                 errD.item(), D_x, D_G_z1, D_G_z2)), args=(epoch, opt.niter, i, len(dataloader), errD, D_x, D_G_z1, D_G_z2))
        xm.add_step_closure(lambda step, errG: print('step %d loss %.6e' % (step, errG.item())), args=(step, errG))
        step += 1
        torch_xla.sync()

    fake = netG(fixed_noise)
    print('fixed-noise sample mean: %.4f' % fake.mean().item())

    # do checkpointing
    xm.save(netG.state_dict(), 'netG_epoch_%d.pth' % epoch)
    xm.save(netD.state_dict(), 'netD_epoch_%d.pth' % epoch)
