"""A change to a design as the work a person does: two built designs (OLD, NEW) compared switch by
switch, cable by cable, file by file, host port by host port, and the fabric while the change is
made.

1. `compare`: switches added, removed and changed; cables to add, remove and move (by physical
   port: a cable whose one end stays where it is plugged is a move); every rendered file that
   changes, with a unified diff; host addresses and leaves that change; the bill of materials delta;
2. `transition`: the fabric while the change is made, one switch's cables at a time (the old
   fabric less the cables being unplugged), through `whatif`'s model of a degraded fabric;
3. `keep`: what the change does to the hosts that exist, and the stack-file keys (checked by
   building NEW with them) that keep them where they are;
4. `report`: text and JSON.
"""
