"""BRAT standoff annotations: the folders, ``.ann`` files and annotations of the brat rapid annotation tool."""
