"""elbo_loss: the negative evidence lower bound per example, and its warning."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import cplxmodule.cplx as cplx
from cplxmodule.nn import CplxLinear
from cplxmodule.nn.relevance import CplxLinearVD, elbo_loss, to_bayesian


def model():
    torch.manual_seed(0)
    return to_bayesian(torch.nn.Sequential(CplxLinear(8, 6), CplxLinear(6, 4)))


@pytest.mark.parametrize("kl_weight", [0.0, 1.0, 15.0])
def test_it_is_the_data_term_plus_the_weighted_kl_per_example(kl_weight):
    net = model()
    data = torch.tensor(3.25)
    kl = sum(layer.penalty.sum() for layer in net if isinstance(layer, CplxLinearVD))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = elbo_loss(net, data, dataset_size=1000, kl_weight=kl_weight)
    torch.testing.assert_close(got, data + kl_weight * kl / 1000)


def test_it_trains_the_variances():
    net = model()
    x, y = cplx.randn(16, 8), cplx.randn(16, 4)
    nll = cplx.gaussian_nll_loss(net(x), y, var=0.5, reduction="batchmean")
    elbo_loss(net, nll, dataset_size=100).backward()
    assert all(layer.log_sigma2.grad is not None and layer.log_sigma2.grad.abs().sum() > 0
               for layer in net)


def test_a_kl_term_that_dominates_is_named():
    net = model()
    x, y = cplx.randn(16, 8), cplx.randn(16, 4)
    # a mean over outputs with a small training set: the collapse of a regression
    mse = cplx.mse_loss(net(x), y)
    with pytest.warns(UserWarning, match=r"KL term is \d+ times the data term \(layer '0'"):
        elbo_loss(net, mse, dataset_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        elbo_loss(net, mse, dataset_size=1)  # once a model: not at every step of its training


def test_the_first_calls_are_checked():
    net = model()
    x, y = cplx.randn(16, 8), cplx.randn(16, 4)
    nll = cplx.gaussian_nll_loss(net(x), y, var=1.0, reduction="batchmean")
    mse = cplx.mse_loss(net(x), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):  # the ratio grows in the first steps of the collapse
            elbo_loss(net, nll, dataset_size=100_000)
    with pytest.warns(UserWarning, match="KL term is"):
        elbo_loss(net, mse, dataset_size=1)
    late = model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(10):
            elbo_loss(late, nll, dataset_size=100_000)
        elbo_loss(late, mse, dataset_size=1)  # checks nothing after the first ten calls
    # a per-example likelihood on a training set of its size: no word
    net = model()
    nll = cplx.gaussian_nll_loss(net(x), y, var=1.0, reduction="batchmean")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        elbo_loss(net, nll, dataset_size=100_000)
        elbo_loss(torch.nn.Linear(2, 2), F.mse_loss(torch.ones(2), torch.zeros(2)), 10)


@pytest.mark.parametrize("kwargs, message", [
    (dict(dataset_size=0), "`dataset_size` must be"),
    (dict(dataset_size=10, kl_weight=-1.0), "`kl_weight` must be"),
    (dict(dataset_size=10.0), "`dataset_size` must be"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        elbo_loss(model(), torch.tensor(1.0), **kwargs)
    with pytest.raises(ValueError, match="`data_term` must be a real scalar"):
        elbo_loss(model(), torch.ones(3), dataset_size=10)
