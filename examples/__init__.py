"""Files a user copies: a provisioning file and target files (README.md)."""
