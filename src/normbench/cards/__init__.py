"""Report cards for a normalization layer: its measured facts, and its runs on every task beside LayerNorm and
RMSNorm (:mod:`normbench.cards.probe`)."""
