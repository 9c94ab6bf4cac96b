"""Knowtator XML annotations in the ODIE anaphora schema, as Knowtator and eHOST write them."""
