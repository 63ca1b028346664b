"""Verify the built fabric against the design: neighbor data in, CABLE-* findings out."""
