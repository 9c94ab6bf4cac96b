"""The generic BRAT builder: a BRAT span/relation corpus declared in its corpus.yaml, built with no code of its own."""
