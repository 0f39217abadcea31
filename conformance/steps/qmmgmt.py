"""Steps for MS-MQMR scenarios (qmmgmt: R_QMMgmtGetInfo properties, R_QMMgmtAction)."""

from __future__ import annotations
