"""Sparsity statistics."""
