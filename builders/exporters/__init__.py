"""Write releases in community formats (``clincorp export FORMAT``)."""
