"""GCP target (pulumi-gcp): imported only when a stack's target is gcp."""
