"""The docstring of every Bayesian layer, from one template.

The variational dropout, ARD and extension layers, real and complex, of
each family (Linear, Bilinear, Conv1-3d, ConvTranspose1-3d) differ only in
their penalty and their dense twin; so do their docstrings, made from the
family's example sizes (``Family.doc``) and the penalty's name.
"""

from .._families import twin_fields

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


def layer_doc(cls):
    """The docstring of the Bayesian layer class ``cls``, e.g. ``CplxConv2dVD``.

    Parameters
    ----------
    cls : type
        A class that declares its family, whose penalty mixin names its
        method in ``_doc_method`` (e.g. ``"variational dropout"``).

    Returns
    -------
    str
    """
    fields = twin_fields(cls)
    return _TEMPLATE.format(
        What=fields.pop("what"),
        method=cls._doc_method,
        gaussian="complex-circular Gaussian" if fields.pop("complex") else "Gaussian",
        **fields,
    )
