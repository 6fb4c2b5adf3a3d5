"""Record what the published cplxmodule 2022.6 reports as sparsity, for test_sparsity_published.py.

Run with the published package alone on the path, from this directory::

    PYTHONPATH=/path/to/published python record_published_sparsity.py

Each model is a ``torch.nn.Sequential`` of published layers (and torch's),
listed as ``(module path, class name, args)``; its parameters, masks and
Bayesian log-variances are drawn from a seeded generator, name by name, so
that any package with the published names can rebuild it from the state_dict.
Written: ``published_sparsity.pt``, a dict of plain tensors, strings, lists
and numbers (``torch.load(..., weights_only=True)`` reads it) holding, per
model, its spec, its state_dict and what ``named_sparsity`` and ``sparsity``
returned for each set of keyword arguments.
"""

import importlib
import pathlib
import warnings

import torch

from cplxmodule.nn.utils.sparsity import named_sparsity, sparsity

MASKED, NN, VD, EXT = (
    "cplxmodule.nn.masked", "cplxmodule.nn", "cplxmodule.nn.relevance",
    "cplxmodule.nn.relevance.extensions",
)
MODELS = {
    "real-masked": [
        (MASKED, "LinearMasked", (6, 4)),
        ("torch.nn", "BatchNorm1d", (4,)),
        (MASKED, "Conv1dMasked", (2, 3, 3)),
        (MASKED, "Conv2dMasked", (2, 3, 2)),
        (MASKED, "BilinearMasked", (3, 4, 2)),
        ("torch.nn", "Linear", (3, 3)),
    ],
    "complex-masked": [
        (MASKED, "CplxLinearMasked", (6, 4)),
        (NN, "CplxBatchNorm1d", (4,)),
        (MASKED, "CplxConv1dMasked", (2, 3, 3)),
        (MASKED, "CplxConv2dMasked", (2, 3, 2)),
        (MASKED, "CplxBilinearMasked", (3, 4, 2)),
        (NN, "CplxLinear", (3, 3)),
    ],
    "bayesian": [
        (VD, "LinearVD", (6, 4)),
        (VD, "Conv2dARD", (2, 3, 2)),
        (VD, "CplxLinearVD", (4, 5)),
        (VD, "CplxBilinearARD", (3, 4, 2)),
        (EXT, "CplxLinearVDApprox", (5, 3)),
        ("torch.nn", "BatchNorm1d", (3,)),
    ],
}
# keyword arguments of each call
CALLS = {
    "real-masked": [{}, {"hard": True}, {"hard": False}],
    "complex-masked": [{}, {"hard": False}],
    "bayesian": [{"threshold": 3.0}, {"threshold": -1.0, "hard": True}],
}


def build(spec):
    return torch.nn.Sequential(*[
        getattr(importlib.import_module(path), name)(*args) for path, name, args in spec
    ])


def draw(model, seed):
    """Fill every parameter, and set every mask (soft ones too), from a seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in sorted(model.state_dict(keep_vars=True).items()):
            if name.endswith("log_sigma2"):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) * 16 - 8)
            elif tensor.is_floating_point():
                tensor.copy_(torch.randn(tensor.shape, generator=generator))
        for name, layer in sorted(model.named_modules()):
            if type(layer).__name__.endswith("Masked"):
                weight = layer.weight
                shape = (weight.real if "Cplx" in type(layer).__name__ else weight).shape
                # 0, 1 and, for the soft counts, values between
                mask = torch.randint(0, 4, shape, generator=generator).float() / 3
                layer.mask = torch.where(mask > 0.5, torch.ones_like(mask), mask)


def main():
    record = {}
    for seed, (key, spec) in enumerate(MODELS.items()):
        model = build(spec)
        draw(model, seed)
        calls = []
        for kwargs in CALLS[key]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the published FutureWarning about buffers
                named = [
                    [name, float(n), int(total)]
                    for name, (n, total) in named_sparsity(model, **kwargs)
                ]
                fraction = float(sparsity(model, **kwargs))
            calls.append({"kwargs": kwargs, "named": named, "sparsity": fraction})
        record[key] = {
            "spec": [[path, name, list(args)] for path, name, args in spec],
            "state_dict": {k: v.clone() for k, v in model.state_dict().items()},
            "calls": calls,
        }
    torch.save(record, pathlib.Path(__file__).with_name("published_sparsity.pt"))


if __name__ == "__main__":
    main()
