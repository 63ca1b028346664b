"""On-premises target: rendered switch configs and host scripts as files, tracked by Pulumi.

Kept import-light on purpose: the dynamic provider host imports `components.onprem.files`
(the provider is pickled by reference), and with it this package.
"""
