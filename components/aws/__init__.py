"""AWS target (pulumi-aws): imported only when a stack's target is aws."""
