"""Model architectures composed from :mod:`normbench.blocks`."""

from normbench.models.majority import MajorityEncoder

__all__ = ["MajorityEncoder"]
