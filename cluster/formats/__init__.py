"""Machine formats of a validation for CI: SARIF 2.1.0 (code scanning) and GitHub annotations."""
