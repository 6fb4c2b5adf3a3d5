"""Write ``published_checkpoint.pt`` with the published cplxmodule 2022.6.

Run with the published package first on the path, never this repository's:

    pip install --no-deps --target /tmp/pub cplxmodule==2022.6
    cd /tmp && PYTHONPATH=/tmp/pub python /path/to/tests/data/make_published_checkpoint.py OUT.pt

The file holds plain tensors only (loadable with ``weights_only=True``):
``state_dict`` (one flat dict, keys ``<layer>.<key>``), and for each layer its
``inputs`` and ``outputs`` (complex values as ``(real, imag)`` pairs).
"""

import sys

import torch

import cplxmodule
from cplxmodule.cplx import Cplx
from cplxmodule.nn import (
    CplxBatchNorm1d,
    CplxBilinear,
    CplxConv1d,
    CplxConv2d,
    CplxLinear,
)
from cplxmodule.nn.masked import Conv2dMasked, CplxConv2dMasked, CplxLinearMasked, LinearMasked


def cplx_randn(*shape):
    return Cplx(torch.randn(*shape), torch.randn(*shape))


def pack(value):
    return (value.real, value.imag) if isinstance(value, Cplx) else value


def main(path):
    # the published package, not this repository's
    where = cplxmodule.__file__
    assert "site-packages" in where or "pub" in where, where
    torch.manual_seed(2022)
    layers = {
        "linear": CplxLinear(4, 3),
        "bilinear": CplxBilinear(3, 2, 4),
        "conv1d": CplxConv1d(2, 3, 3, padding=1),
        "conv2d": CplxConv2d(2, 2, 3, stride=2, bias=False),
        "batchnorm": CplxBatchNorm1d(3),
        "linear_masked": CplxLinearMasked(4, 3),
        "conv2d_masked": CplxConv2dMasked(2, 3, 3),
        "real_linear_masked": LinearMasked(4, 3),
        "real_conv2d_masked": Conv2dMasked(2, 3, 3),
    }
    inputs = {
        "linear": (cplx_randn(5, 4),),
        "bilinear": (cplx_randn(5, 3), cplx_randn(5, 2)),
        "conv1d": (cplx_randn(2, 2, 7),),
        "conv2d": (cplx_randn(2, 2, 7, 7),),
        "batchnorm": (cplx_randn(6, 3, 4),),
        "linear_masked": (cplx_randn(5, 4),),
        "conv2d_masked": (cplx_randn(2, 2, 5, 5),),
        "real_linear_masked": (torch.randn(5, 4),),
        "real_conv2d_masked": (torch.randn(2, 2, 5, 5),),
    }
    for name, layer in layers.items():
        if hasattr(layer, "mask"):
            layer.mask = torch.rand(layer.weight.shape) > 0.5

    # running statistics from a few training batches
    for _ in range(3):
        layers["batchnorm"](cplx_randn(8, 3, 4) * 2 + 1)

    state_dict, outputs = {}, {}
    with torch.no_grad():
        for name, layer in layers.items():
            layer.eval()
            state_dict.update({f"{name}.{k}": v for k, v in layer.state_dict().items()})
            outputs[name] = pack(layer(*inputs[name]))

    torch.save(
        {
            "state_dict": state_dict,
            "inputs": {k: [pack(v) for v in vs] for k, vs in inputs.items()},
            "outputs": outputs,
        },
        path,
    )


if __name__ == "__main__":
    main(sys.argv[1])
