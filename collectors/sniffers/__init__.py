"""Sniffers: how much a text looks like each kind of evidence, apart from the parsers that read it, so detection
loads these small modules and only the parsers of the kinds it finds (collectors/parsers/readers.py)."""
