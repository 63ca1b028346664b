"""`lab`: the design's GPU fabric booted in real routing software on this machine.

One Linux network namespace per switch and per host, one veth pair per cable of the design,
FRR (zebra, bgpd, bfdd) in every switch namespace running the rendered routing config, each host
applying the rendered per-rail routing. `model` turns a design and its rendered files into what
is built, `expect` derives what a correct fabric shows, `runtime` builds and removes it,
`observe` reads it, `check` and `failure` compare the two.
"""
