"""``clincorp view``: a release as static HTML pages that open offline."""
