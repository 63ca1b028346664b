"""The template engine every dialect renders with (`engine`): compiled once, StrictUndefined. What
is rendered is the intent (cluster.intent: switches, the oob segment, the QoS plan); the dialects'
renderers live in their folders (cluster/dialects/<os>/render.py); `cluster.configs` renders a
design's device configs with them."""
