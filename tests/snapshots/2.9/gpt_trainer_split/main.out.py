"""Setup spread over three files: this one builds the model and its optimizer (through
model.py), then hands both to the trainer of trainer.py, which moves the model to the
GPU; on CUDA the optimizer still steps the moved parameters.

    python main.py
"""
import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla

from model import TinyLM, create_optimizer
from trainer import Trainer


def get_train_objs(vocab=11, width=16):
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, vocab, (64, 9), generator=g)
    data = DataLoader(TensorDataset(tokens[:, :-1], tokens[:, 1:]), batch_size=8, shuffle=False)
    model = TinyLM(vocab, width)
    optimizer = create_optimizer(model.to(torch_xla.device()), lr=3e-3, weight_decay=0.1)
    return model, optimizer, data


def main():
    torch.manual_seed(0)
    device = "xla"
    model, optimizer, data = get_train_objs()
    Trainer(model, optimizer, data, device).train(2)


if __name__ == "__main__":
    main()
