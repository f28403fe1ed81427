"""A tiny GAN with two optimizers sharing one GradScaler under autocast."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm

nz, nx = 8, 16


def main():
    torch.manual_seed(5)
    device = torch_xla.device()
    netG = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, nx)).to(device)
    netD = nn.Sequential(nn.Linear(nx, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1)).to(device)
    optimizerD = syncfree.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = syncfree.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    scaler = torch.amp.GradScaler("xla")
    real_data = torch.randn(160, nx) * 0.5 + 1.0

    for i in range(10):
        real = real_data[i * 16:(i + 1) * 16].to(device)
        noise = torch.randn(16, nz, device=device)
        ones = torch.ones(16, 1, device=device)
        zeros = torch.zeros(16, 1, device=device)

        optimizerD.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            fake = netG(noise)
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        scaler.scale(errD).backward()
        scaler.step(optimizerD)

        optimizerG.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            errG = criterion(netD(fake), ones)
        scaler.scale(errG).backward()
        scaler.step(optimizerG)
        scaler.update()
        xm.add_step_closure(lambda i, errD, errG: print(f"step {i} loss {errD.item() + errG.item():.6e}"), args=(i, errD, errG))
        torch_xla.sync()


if __name__ == "__main__":
    main()
