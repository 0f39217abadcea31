"""The conformance suite: targets, SUT control, verdicts, the pytest plugin and its cases."""
