"""normbench: a reference benchmark suite for normalization ablations in Transformers.

LayerNorm = *projection* (subtract the mean, i.e. project onto the hyperplane
orthogonal to the all-ones vector) followed by *scaling* (every vector gets norm
sqrt(d)), then an optional affine gain/bias. normbench trains and analyses
Transformers with each component switched on or off and at each placement.
"""

__version__ = "0.1.0"
