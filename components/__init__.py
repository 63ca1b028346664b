"""Pulumi components for gpu-cluster: one module per concern, per-target code behind each.

Provider SDKs (pulumi_aws, pulumi_gcp, pulumi_azure_native) are imported only inside their
target's package, so an on-prem run never pays for a cloud SDK.
"""
