"""The HTML report: one self-contained file with the design, findings, tiers, BOM and an SVG diagram."""
