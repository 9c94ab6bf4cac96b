"""Re-anchoring: the spans of a text-free release relocated in copies of its documents that differ from the
maintainer's, from its anchors alone."""
