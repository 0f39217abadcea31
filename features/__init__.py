"""The Gherkin scenarios, one file per document section (README.md); data, no code."""
