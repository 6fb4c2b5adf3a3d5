"""Running complex models under torch.nn.DataParallel."""

__all__ = []
