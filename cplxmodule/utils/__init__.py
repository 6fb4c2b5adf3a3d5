"""Tensor views and spectral helpers."""
