"""Split against modulus gates on sequences whose carrier phase is random.

Each example is a noisy complex tone burst whose class is its frequency
(``--classes`` of them, in cycles per sample), with a carrier phase drawn
uniformly on the circle. A one-layer :class:`~cplxmodule.nn.CplxGRU` reads
the sequence; a real linear read-out classifies the moduli of its last
state. With ``gates="modulus"`` the last state turns with the carrier and
its moduli do not see the phase at all; the split gates must learn to
ignore it from the examples. Prints the test accuracy of each, per seed;
:doc:`/guides/sequence` quotes one run.

Run::

    python benchmarks/phase_study.py [--train 48] [--epochs 40] [--seeds 3]
"""

import argparse
import math

import torch
from tqdm import tqdm

from cplxmodule import cplx
from cplxmodule.nn import CplxGRU

FREQUENCIES = (0.05, 0.1, 0.15, 0.2)


def bursts(count, length, noise, generator):
    """``(x, labels)``: tones of random phase and class, ``x`` ``(length, count, 1)``."""
    labels = torch.randint(len(FREQUENCIES), (count,), generator=generator)
    frequency = torch.tensor(FREQUENCIES)[labels]
    phase = 2 * math.pi * torch.rand(count, generator=generator)
    t = torch.arange(length, dtype=torch.float32)[:, None]
    angle = 2 * math.pi * frequency * t + phase
    x = torch.polar(torch.ones_like(angle), angle)
    x = x + noise * torch.randn(length, count, dtype=torch.complex64, generator=generator)
    return cplx.from_complex(x[..., None]), labels


class Classifier(torch.nn.Module):
    def __init__(self, hidden, gates):
        super().__init__()
        self.gru = CplxGRU(1, hidden, gates=gates)
        self.readout = torch.nn.Linear(hidden, len(FREQUENCIES))

    def forward(self, x):
        _, h_n = self.gru(x)
        return self.readout(abs(h_n[-1]))


def accuracy(model, x, labels):
    with torch.no_grad():
        return float((model(x).argmax(-1) == labels).float().mean())


def run(gates, seed, args):
    generator = torch.Generator().manual_seed(seed)
    train = bursts(args.train, args.length, args.noise, generator)
    test = bursts(2000, args.length, args.noise, generator)
    torch.manual_seed(seed)
    model = Classifier(args.hidden, gates)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(args.epochs):
        for batch in torch.randperm(args.train).split(32):
            optimizer.zero_grad()
            x = cplx.Cplx(train[0].real[:, batch], train[0].imag[:, batch])
            torch.nn.functional.cross_entropy(model(x), train[1][batch]).backward()
            optimizer.step()
    return accuracy(model, *train), accuracy(model, *test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=48)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("gates    seed  train  test")
    for gates in ("split", "modulus"):
        for seed in tqdm(range(args.seeds), desc=gates, leave=False):
            train, test = run(gates, seed, args)
            print(f"{gates:8} {seed:4}  {train:.3f}  {test:.3f}")


if __name__ == "__main__":
    main()
