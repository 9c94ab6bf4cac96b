"""The corpus plugins shipped with clinical-corpora: one package per corpus, each registering itself."""
