"""A complex-baseband digital modulation recognition task, generated from a seed.

Each example is a short burst of a digitally modulated signal as a receiver
sees it at baseband: random symbols of one constellation, shaped by a
root-raised-cosine pulse, rotated by a random carrier phase, drifting by a
random carrier frequency offset, started at a random sampling instant and
buried in circular complex white Gaussian noise at a random signal-to-noise
ratio. The task is to tell the constellation. Everything is drawn from
:class:`numpy.random.SeedSequence` streams of one seed, so a seed gives the
same data on every machine, and nothing is downloaded.
"""

from typing import NamedTuple

import numpy as np
import scipy.signal

from ..cplx._shared import check_positive_int

__all__ = ["MODULATIONS", "Signals", "constellation", "rrc_taps", "generate"]

#: The constellations of the task, in label order.
MODULATIONS = ("BPSK", "QPSK", "8PSK", "PAM4", "16QAM", "64QAM")


class Signals(NamedTuple):
    """A batch of generated bursts (a named tuple).

    Parameters
    ----------
    signal : numpy.ndarray
        ``complex64`` of shape ``(n, length)``, the received samples.
    label : numpy.ndarray
        ``int64`` of shape ``(n,)``, the index of the constellation in
        ``classes``.
    snr_db : numpy.ndarray
        ``float64`` of shape ``(n,)``: the signal-to-noise ratio of each
        burst in dB (signal power over noise power per sample); ``inf``
        when generated without noise.
    """

    signal: np.ndarray
    label: np.ndarray
    snr_db: np.ndarray


def constellation(name):
    """The points of a named constellation, scaled to unit mean power.

    Parameters
    ----------
    name : str
        One of :data:`MODULATIONS`.

    Returns
    -------
    numpy.ndarray
        ``complex128`` points, equiprobable.

    Raises
    ------
    ValueError
        If ``name`` is not a known constellation.

    Examples
    --------
    >>> points = constellation("16QAM")
    >>> len(points), round(float(np.mean(abs(points) ** 2)), 12)
    (16, 1.0)
    """
    if name.endswith("PSK") and name[:-3] in ("B", "Q", "8"):
        order = {"B": 2, "Q": 4, "8": 8}[name[:-3]]
        offset = np.pi / 4 if order == 4 else 0.0
        points = np.exp(1j * (offset + 2 * np.pi * np.arange(order) / order))
    elif name == "PAM4":
        points = np.arange(-3, 4, 2).astype(complex)
    elif name in ("16QAM", "64QAM"):
        side = np.arange(-np.sqrt(int(name[:2])) + 1, np.sqrt(int(name[:2])), 2)
        points = (side[:, None] + 1j * side[None, :]).ravel()
    else:
        raise ValueError(f"constellation: unknown name {name!r}; expected one of {MODULATIONS}")
    return points / np.sqrt(np.mean(abs(points) ** 2))


def rrc_taps(rolloff, sps, span):
    r"""Root-raised-cosine pulse, normalised to unit power per sample.

    Parameters
    ----------
    rolloff : float
        Excess bandwidth :math:`\beta`, in ``(0, 1]``.
    sps : int
        Samples per symbol.
    span : int
        Length of the pulse in symbols; the filter has ``span * sps + 1`` taps.

    Returns
    -------
    numpy.ndarray
        The taps, scaled so that their squares sum to ``sps``: unit-power
        symbols shaped by the filter give a signal of unit mean power.

    Examples
    --------
    >>> taps = rrc_taps(0.35, sps=4, span=8)
    >>> len(taps), round(float(np.sum(taps ** 2)), 12)
    (33, 4.0)
    """
    t = np.arange(-span * sps / 2, span * sps / 2 + 1) / sps
    beta = rolloff
    with np.errstate(divide="ignore", invalid="ignore"):
        taps = (
            np.sin(np.pi * t * (1 - beta)) + 4 * beta * t * np.cos(np.pi * t * (1 + beta))
        ) / (np.pi * t * (1 - (4 * beta * t) ** 2))
    # the two removable singularities of the closed form
    taps[t == 0] = 1 - beta + 4 * beta / np.pi
    edge = np.isclose(abs(t), 1 / (4 * beta))
    taps[edge] = (beta / np.sqrt(2)) * (
        (1 + 2 / np.pi) * np.sin(np.pi / (4 * beta)) + (1 - 2 / np.pi) * np.cos(np.pi / (4 * beta))
    )
    return taps * np.sqrt(sps / np.sum(taps**2))


def generate(
    n_per_class,
    *,
    length=128,
    sps=4,
    snr_db=(10.0, 30.0),
    max_freq_offset=0.002,
    rolloff=0.35,
    span=8,
    classes=MODULATIONS,
    seed=0,
):
    """Generate a balanced, shuffled set of received bursts.

    Parameters
    ----------
    n_per_class : int
        Bursts of each constellation.
    length : int, default 128
        Samples per burst.
    sps : int, default 4
        Samples per symbol.
    snr_db : (float, float) or None, default (10, 30)
        Range of the uniformly drawn signal-to-noise ratio in dB; ``None``
        gives the noiseless bursts (the same bursts as with noise, from the
        same seed, since the noise has a stream of its own).
    max_freq_offset : float, default 0.002
        Carrier frequency offsets are uniform in ``[-max_freq_offset,
        max_freq_offset]`` cycles per sample.
    rolloff : float, default 0.35
        Root-raised-cosine excess bandwidth.
    span : int, default 8
        Pulse length in symbols.
    classes : sequence of str, default MODULATIONS
        The constellations, in label order.
    seed : int or sequence of int, default 0
        Entropy of the :class:`numpy.random.SeedSequence` that every draw
        comes from.

    Returns
    -------
    Signals
        ``signal`` of shape ``(n_per_class * len(classes), length)``, with
        its labels and signal-to-noise ratios.

    Raises
    ------
    ValueError
        If ``n_per_class``, ``length`` or ``sps`` is not a positive
        integer, or ``snr_db`` is not an increasing pair.

    Examples
    --------
    >>> data = generate(10, length=64, seed=1)
    >>> data.signal.shape, data.signal.dtype, np.bincount(data.label).tolist()
    ((60, 64), dtype('complex64'), [10, 10, 10, 10, 10, 10])
    """
    for name, value in (("n_per_class", n_per_class), ("length", length), ("sps", sps)):
        check_positive_int(value, name, "generate")
    if snr_db is not None and not (len(snr_db) == 2 and snr_db[0] <= snr_db[1]):
        raise ValueError(f"generate: snr_db must be a pair (low, high) with low <= high, got {snr_db!r}")
    points = [constellation(name) for name in classes]
    symbols_rng, channel_rng, noise_rng = map(np.random.default_rng, np.random.SeedSequence(seed).spawn(3))

    n = n_per_class * len(classes)
    label = symbols_rng.permutation(np.repeat(np.arange(len(classes)), n_per_class))
    n_symbols = length // sps + 2 * span + 1
    symbols = np.empty((n, n_symbols), complex)
    uniform = symbols_rng.random((n, n_symbols))
    for k, pts in enumerate(points):
        rows = label == k
        symbols[rows] = pts[(uniform[rows] * len(pts)).astype(int)]
    shaped = scipy.signal.upfirdn(rrc_taps(rolloff, sps, span), symbols, up=sps, axis=1)

    # past the filter's transient, at a random sampling instant
    start = span * sps + channel_rng.integers(0, sps, n)
    signal = np.take_along_axis(shaped, start[:, None] + np.arange(length), axis=1)
    phase = channel_rng.uniform(0, 2 * np.pi, n)
    freq = channel_rng.uniform(-max_freq_offset, max_freq_offset, n)
    signal *= np.exp(1j * (phase[:, None] + 2 * np.pi * freq[:, None] * np.arange(length)))

    if snr_db is None:
        snr = np.full(n, np.inf)
    else:
        low, high = snr_db
        snr = noise_rng.uniform(low, high, n)
        noise = noise_rng.standard_normal((n, length, 2)) @ np.array([1, 1j]) / np.sqrt(2)
        signal += noise * 10 ** (-snr[:, None] / 20)
    return Signals(signal.astype(np.complex64), label.astype(np.int64), snr)
