"""Re-exports, as many repositories' utils packages do."""
from .misc import NativeScalerWithGradNormCount, get_device, save_checkpoint  # noqa: F401
