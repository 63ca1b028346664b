"""Azure target (pulumi-azure-native): imported only when a stack's target is azure."""
