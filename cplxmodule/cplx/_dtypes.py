"""The dtype tables of the functional core: a leaf module, imported by every other.

Not public API: the names here may change.
"""

import torch

#: The real dtype of each complex dtype.
REAL_OF = {
    torch.complex32: torch.float16,
    torch.complex64: torch.float32,
    torch.complex128: torch.float64,
}

#: The complex dtype of each real dtype that has one.
COMPLEX_OF = {real: complex_ for complex_, real in REAL_OF.items()}

#: The real dtypes whose complex dtype every torch op supports (complex32
#: lacks many ops, ``abs`` on the CPU among them).
NATIVE_DTYPES = (torch.float32, torch.float64)

#: The half precisions, computed in float32 where rounding would spoil a
#: result (norms, modReLU's scale, max-pooling's comparisons), as torch's own
#: kernels accumulate them in float32.
HALF_DTYPES = (torch.float16, torch.bfloat16)

#: The dtypes that :func:`torch.autocast` casts (it leaves float64 and
#: complex tensors alone).
AUTOCAST_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


# One call that tells whether autocast is on for any device (``torch.nn.RNN``
# asks it too), where the test for the input's device costs several times more.
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", lambda: True)


def autocast_dtype(input):
    """The dtype :func:`torch.autocast` runs ``input``'s products in, or ``None``."""
    if not _any_autocast():
        return None
    device = input.device.type
    if input.dtype in AUTOCAST_DTYPES and device != "meta" and torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return None


def real_dtype(dtype):
    """The real dtype of the parts for ``dtype`` (a complex dtype names its parts')."""
    return REAL_OF.get(dtype, dtype)
