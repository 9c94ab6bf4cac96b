"""Inter-annotator agreement measures."""

from validation.agreement.pairwise import pairwise_kappa

__all__ = ["pairwise_kappa"]
