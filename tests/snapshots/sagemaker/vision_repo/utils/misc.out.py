"""Device, scaler and checkpoint helpers shared by the entry point and the engine."""
import torch
import torch_xla.amp
import torch_xla.core.xla_model as xm


def get_device(gpu=0):
    return xm.xla_device()
    return torch.device("cpu")


class NativeScalerWithGradNormCount:
    """Backward pass, gradient clipping and optimizer step under a gradient scaler."""

    def __init__(self):
        self._scaler = torch_xla.amp.GradScaler()

    def __call__(self, loss, optimizer, clip_grad=1.0, parameters=None):
        self._scaler.scale(loss).backward()
        self._scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()
        return norm

    def state_dict(self):
        return self._scaler.state_dict()


def save_checkpoint(path, model, optimizer, loss_scaler, epoch):
    xm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scaler": loss_scaler.state_dict(), "epoch": epoch}, path)
