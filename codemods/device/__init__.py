"""The device (XLA1): CUDA devices, `.cuda()`, device indices and availability checks become the XLA device."""
