"""Weight masking for real and complex layers."""
