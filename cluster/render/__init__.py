"""What every dialect renders with: the template engine (`engine`), the plain views of a switch
(`views`: ports, addresses, neighbors, its QoS plan) and the out-of-band segment (`oob`). The
dialects' renderers live in their folders (cluster/dialects/<os>/render.py); `cluster.configs`
renders a design's device configs with them."""
