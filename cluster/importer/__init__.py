"""Import a built fabric: what its devices report (LLDP, ibnetdiscover) -> a stack file that
reproduces it, and CABLE-* findings for what is cabled but fits no regular design.

Four steps, each a module:
1. `observe`: the neighbor data read (the parsers `verify` uses), one link per cabled port pair;
2. `roles`: each device's place in the design, from the names the product gives devices
   (`<pool>-node-NNN`, `p1-leaf-002-r3`, `spine-004`, `stor-leaf-001`);
3. `infer`: the design those links and roles describe (pools, NICs, design, planes, tiers, pods,
   switch models and as-designed counts), each count the one most devices show, so a fault at one
   device never changes the design; what the data cannot say is noted for the stack file's comments;
4. `run`: the stack file written (`write`), built, and compared with the same data as `verify`
   does, so every device that differs from the regular design is a CABLE-* finding at that device.
"""
