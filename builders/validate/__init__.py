"""``clincorp validate``: a release re-checked, one module per family of gates (files, identity, rows, records,
suite, published numbers and descriptions), run in order by ``run.py``."""
