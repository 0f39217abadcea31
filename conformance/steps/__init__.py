"""Step definitions for the scenarios in features/. Every call goes through the ``mq``
fixture (conformance/session.py), which checks the target's result against the model."""
