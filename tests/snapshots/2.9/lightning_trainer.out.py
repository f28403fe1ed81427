"""A Lightning script in the style of the Lightning docs' autoencoder example: a
LightningModule whose steps move a mask to the GPU themselves, and a Trainer on four
GPUs with DDP and float16 mixed precision.

    python lightning_trainer.py
"""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla


class LitAutoEncoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 28 * 28))

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        noise = torch.randn(x.shape).to(torch_xla.device()) * 0.01
        x_hat = self.decoder(self.encoder(x + noise))
        loss = F.mse_loss(x_hat, x)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    data = TensorDataset(torch.rand(256, 28 * 28), torch.zeros(256))
    loader = DataLoader(data, batch_size=32)
    trainer = L.Trainer(accelerator="tpu", devices=4, strategy="xla", precision="bf16-true", max_epochs=1)
    trainer.fit(LitAutoEncoder(), loader)


if __name__ == "__main__":
    main()
