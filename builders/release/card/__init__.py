"""Describing a release: its card (with the Hub front matter and figures), croissant.json, and what changed."""
