"""gpu-cluster: validate, render and plan GPU cluster fabrics from one stack file.

Pure Python; never imports pulumi (only components/, __main__.py and policy/ do).
"""

__version__ = "0.3.0"
