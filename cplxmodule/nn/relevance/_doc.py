"""The docstring of every Bayesian layer, from one template.

The variational dropout, ARD and extension layers, real and complex, of
each family (Linear, Bilinear, Conv1-3d, ConvTranspose1-3d) differ only in
their penalty and their dense twin; so do their docstrings, whose shapes
and example sizes per family this module holds once.
"""

# family: (what it is, constructor arguments, inputs, output shape)
_FAMILIES = {
    "Linear": ("linear layer", "4, 3", "{randn}(2, 4)", "2, 3"),
    "Bilinear": ("bilinear layer", "3, 4, 5", "{randn}(2, 3), {randn}(2, 4)", "2, 5"),
    "Conv1d": ("1d convolution", "2, 4, 3", "{randn}(2, 2, 8)", "2, 4, 6"),
    "Conv2d": ("2d convolution", "2, 4, 3", "{randn}(2, 2, 5, 5)", "2, 4, 3, 3"),
    "Conv3d": ("3d convolution", "2, 4, 3", "{randn}(2, 2, 4, 4, 4)", "2, 4, 2, 2, 2"),
    "ConvTranspose1d": ("1d transposed convolution", "2, 4, 3", "{randn}(2, 2, 8)", "2, 4, 10"),
    "ConvTranspose2d": (
        "2d transposed convolution",
        "2, 4, 3",
        "{randn}(2, 2, 3, 3)",
        "2, 4, 5, 5",
    ),
    "ConvTranspose3d": (
        "3d transposed convolution",
        "2, 4, 3",
        "{randn}(2, 2, 2, 2, 2)",
        "2, 4, 4, 4, 4",
    ),
}

_TEMPLATE = """{What} with {method}.

    Takes the arguments of :class:`{twin}`.

    Shape
    -----
    - Input and output: as for :class:`{twin}`;
      in training mode the output is one {gaussian} sample, in eval mode
      its mean.
    - ``penalty`` and ``relevance(threshold=t)``: the {weight} shape.

    Examples
    --------
    >>> layer = {name}({arguments})
    >>> layer({inputs}).shape
    torch.Size([{output}])
    """


def layer_doc(name, method):
    """The docstring of the Bayesian layer class ``name``, e.g. ``"CplxConv2dVD"``.

    Parameters
    ----------
    name : str
        The class's name: ``Cplx`` for a complex layer, then its family.
    method : str
        What it adds to the dense layer, e.g. ``"variational dropout"``.

    Returns
    -------
    str
    """
    is_complex = name.startswith("Cplx")
    family = next(f for f in _FAMILIES if name.startswith(f, 4 * is_complex))
    what, arguments, inputs, output = _FAMILIES[family]
    return _TEMPLATE.format(
        What=f"Complex {what}" if is_complex else what.capitalize(),
        method=method,
        twin=f"~cplxmodule.nn.Cplx{family}" if is_complex else f"torch.nn.{family}",
        gaussian="complex-circular Gaussian" if is_complex else "Gaussian",
        weight="weight's real" if is_complex else "weight's",
        name=name,
        arguments=arguments,
        inputs=inputs.format(randn="cplx.randn" if is_complex else "torch.randn"),
        output=output,
    )
