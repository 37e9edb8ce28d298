"""Data: the synthetic majority generator and (later) text loaders and tokenizers."""
