"""Initialisation of complex parameters."""

__all__ = []
