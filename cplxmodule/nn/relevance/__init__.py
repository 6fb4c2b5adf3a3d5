"""Bayesian sparsification: variational dropout and ARD, real and complex."""
