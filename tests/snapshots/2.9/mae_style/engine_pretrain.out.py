"""The training loop in the style of MAE's engine_pretrain.py: the backward pass and the
optimizer step happen inside the loss scaler, a callable from util/misc.py."""
import math
import sys

import torch
import torch_xla

import util.lr_sched as lr_sched


def train_one_epoch(model, data_loader, optimizer, device, epoch, loss_scaler, args=None, step=0):
    model.train(True)
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, _) in enumerate(data_loader):
        # we use a per iteration (instead of per epoch) lr scheduler
        if data_iter_step % accum_iter == 0:
            lr_sched.adjust_learning_rate(optimizer, data_iter_step / len(data_loader) + epoch, args)

        samples = samples.to(device, non_blocking=True)

        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(samples)

        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        loss /= accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0)
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()

        print(f"step {step} loss {loss_value:.6e}")
        step += 1
        torch_xla.sync()
    return step
