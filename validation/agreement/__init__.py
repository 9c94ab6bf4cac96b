"""Inter-annotator agreement measures."""

from clinical_corpora.validation.agreement.pairwise import pairwise_kappa

__all__ = ["pairwise_kappa"]
