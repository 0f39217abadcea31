"""Steps for MS-MQRR 3.1.4.10-3.1.4.15, 3.1.5.1 and 3.1.6 scenarios (move, transactions,
acknowledgement class, cleanup timer, rundown). Reuses the steps of remoteread.py."""

from __future__ import annotations
