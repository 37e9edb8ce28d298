"""normbench: a reference benchmark suite for normalization ablations in Transformers.

LayerNorm = *projection* (subtract the mean, i.e. project onto the hyperplane
orthogonal to the all-ones vector) followed by *scaling* (every vector gets norm
sqrt(d)), then an optional affine gain/bias. normbench trains and analyses
Transformers with each component switched on or off and at each placement.
"""

import os

__version__ = "0.1.0"

# Intel MKL's conditional numerical reproducibility: the same results from run to run on one CPU,
# whatever the memory alignment of the operands (see normbench.training.reproducibility). MKL reads it
# once, at its first call; an explicit setting of the user's is kept.
MKL_CBWR_DEFAULT = "AUTO,STRICT"
os.environ.setdefault("MKL_CBWR", MKL_CBWR_DEFAULT)
