"""mqconform: executable specification, conformance suite and reference server for MSMQ's
RemoteRead (MS-MQRR) and qmmgmt (MS-MQMR) RPC interfaces, on the data model of MS-MQDMPR."""

__version__ = "0.1.0"
