"""The i2b2/VA 2011 coreference format (which carried the ODIE corpus): docs, concepts, chains and pairs files."""
