"""What a run shows while it trains: the geometry monitor's series, one progress line every few seconds in a log,
and TensorBoard's HParams tab and custom-scalars layout."""
