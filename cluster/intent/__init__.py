"""The intent stage: vendor-neutral records of what every device is to do, derived once from the
spec and the topology. Dialects render them; rules read them; nothing here writes a config."""
