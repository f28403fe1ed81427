"""Dense autoencoder with separate optimizers for encoder and decoder."""
import torch
from torch import nn, optim
from torch.optim import Adam
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.manual_seed(2024)
device = xm.xla_device()

INPUT_DIM = 24
LATENT_DIM = 4
EPOCHS = 3
BATCH_SIZE = 32

# Data lying near a low-dimensional subspace, so it is compressible
basis = torch.randn(LATENT_DIM, INPUT_DIM)
codes = torch.randn(160, LATENT_DIM)
data = codes @ basis + 0.05 * torch.randn(160, INPUT_DIM)
loader = DataLoader(TensorDataset(data), batch_size=BATCH_SIZE, shuffle=True)

encoder = nn.Sequential(
    nn.Linear(INPUT_DIM, 16),
    nn.ReLU(),
    nn.Linear(16, LATENT_DIM),
).to(device)
decoder = nn.Sequential(
    nn.Linear(LATENT_DIM, 16),
    nn.ReLU(),
    nn.Linear(16, INPUT_DIM),
).to(device)

encoder_opt = Adam(encoder.parameters(), lr=1e-2)
decoder_opt = optim.SGD(decoder.parameters(), lr=0.05, momentum=0.9)
scheduler = StepLR(encoder_opt, step_size=1, gamma=0.5)
criterion = nn.MSELoss()


def train_one_epoch(epoch, start_step):
    """Runs one pass over the loader and returns the next global step."""
    step = start_step
    encoder.train()
    decoder.train()
    for (batch,) in pl.MpDeviceLoader(loader, device):
        batch = batch.to(device)

        encoder_opt.zero_grad()
        decoder_opt.zero_grad()

        recon = decoder(encoder(batch))
        loss = criterion(recon, batch)
        loss.backward()

        xm.optimizer_step(encoder_opt)
        xm.optimizer_step(decoder_opt)

        xm.add_step_closure(lambda step, loss: print("step %d loss %.6e" % (step, loss.item())), args=(step, loss))
        step += 1
    return step


if __name__ == "__main__":
    global_step = 0
    for epoch in range(EPOCHS):
        global_step = train_one_epoch(epoch, global_step)
        scheduler.step()
        print("epoch %d done, encoder lr now %.4g" % (epoch, scheduler.get_last_lr()[0]))

    xm.save({'encoder': encoder.state_dict(), 'decoder': decoder.state_dict()}, 'autoencoder.pt')
