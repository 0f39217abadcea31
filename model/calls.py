"""The vocabulary the whole project speaks: one call and one result type per opnum of
RemoteRead (MS-MQRR 3.1.4, IDL in MS-MQRR 6) and qmmgmt (MS-MQMR 3.1.4, IDL in MS-MQMR 6).

Field names are the IDL's parameter names, exactly (``phContext``, ``ulAction``,
``dwRequestId``), so a reader can hold the IDL beside the code. ``hBind`` is the binding, not
data, and does not appear. A call carries the [in] parameters; a result the [out] parameters and
``status``: the return value of an HRESULT/DWORD method, or, for the void methods R_OpenQueue
and R_OpenQueueForMove, the HRESULT thrown as an RPC exception (``raised`` is then True; 0 means
no exception). The wire layer (wire/) turns these into NDR and back; the model computes them.

Types: a context handle is the 20 opaque bytes the server hands out (NDR context handle:
attributes DWORD + UUID); GUIDs are ``uuid.UUID``; XACTUOW is its 16 bytes; QUEUE_FORMAT and
MGMT_OBJECT are the typed values of model.formats; PROPVARIANT is model.calls.PropVariant.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

# ---------------------------------------------------------------------------------------------
# MS-MQRR 2.2 data types
# ---------------------------------------------------------------------------------------------

#: MS-MQRR 2.2.7 SectionType
stFullPacket = 0
stBinaryFirstSection = 1
stBinarySecondSection = 2
stSrmpFirstSection = 3
stSrmpSecondSection = 4
SECTION_TYPES = {stFullPacket: "stFullPacket", stBinaryFirstSection: "stBinaryFirstSection",
                 stBinarySecondSection: "stBinarySecondSection",
                 stSrmpFirstSection: "stSrmpFirstSection",
                 stSrmpSecondSection: "stSrmpSecondSection"}

#: MS-MQRR 3.1.4.7 ulAction values (MS-MQMQ defines the constants)
MQ_ACTION_RECEIVE = 0x00000000
MQ_ACTION_PEEK_CURRENT = 0x80000000
MQ_ACTION_PEEK_NEXT = 0x80000001
MQ_LOOKUP_PEEK_CURRENT = 0x40000010
MQ_LOOKUP_PEEK_NEXT = 0x40000011
MQ_LOOKUP_PEEK_PREV = 0x40000012
MQ_LOOKUP_RECEIVE_CURRENT = 0x40000020
MQ_LOOKUP_RECEIVE_NEXT = 0x40000021
MQ_LOOKUP_RECEIVE_PREV = 0x40000022

#: dwAccess / dwShareMode (MS-MQRR 3.1.4.2, 3.1.4.11; 4.1 writes MQ_RECEIVE_ACCESS)
RECEIVE_ACCESS = MQ_RECEIVE_ACCESS = 0x00000001
MQ_MOVE_ACCESS = 0x00000004
PEEK_ACCESS = 0x00000020
MQ_DENY_NONE = 0x00000000
MQ_DENY_SHARE = 0x00000001

#: dwAck (MS-MQRR 3.1.4.9)
RR_ACK = 0x00000002
RR_NACK = 0x00000001

#: ulTimeout meaning "wait forever" (MS-MQMQ)
INFINITE_TIMEOUT = 0xFFFFFFFF

CONTEXT_HANDLE_SIZE = 20
XACTUOW_SIZE = 16


@dataclass(frozen=True)
class SectionBuffer:
    """MS-MQRR 2.2.6 SectionBuffer."""

    SectionBufferType: int
    SectionSizeAlloc: int
    SectionSize: int
    pSectionBuffer: bytes | None


@dataclass(frozen=True)
class PropVariant:
    """A PROPVARIANT (MS-MQMQ 2.2.12): its VARTYPE and value (int, str, bytes, uuid.UUID, a
    list for a vector type, or None for VT_NULL)."""

    vt: int
    value: Any = None


# ---------------------------------------------------------------------------------------------
# Base classes
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Call:
    interface: ClassVar[str]
    opnum: ClassVar[int]


@dataclass(frozen=True)
class Result:
    status: int = 0
    raised: bool = False


# ---------------------------------------------------------------------------------------------
# RemoteRead (MS-MQRR), uuid 1a9134dd-7b39-45ba-ad88-44d01ca47f28 v1.0
# ---------------------------------------------------------------------------------------------

REMOTEREAD = "RemoteRead"
REMOTEREAD_UUID = uuid.UUID("1a9134dd-7b39-45ba-ad88-44d01ca47f28")
QMMGMT = "qmmgmt"
QMMGMT_UUID = uuid.UUID("41208ee0-e970-11d1-9b9e-00e02c064c39")


@dataclass(frozen=True)
class R_GetServerPort(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 0


@dataclass(frozen=True)
class R_GetServerPortResult(Result):
    """``status`` is the DWORD returned: the port, or 0 on error."""


@dataclass(frozen=True)
class R_OpenQueue(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 2
    pQueueFormat: Any = None
    dwAccess: int = MQ_RECEIVE_ACCESS
    dwShareMode: int = MQ_DENY_NONE
    pClientId: uuid.UUID | None = None
    fNonRoutingServer: int = 1
    Major: int = 0
    Minor: int = 0
    BuildNumber: int = 0
    fWorkgroup: int = 0


@dataclass(frozen=True)
class R_OpenQueueResult(Result):
    pphContext: bytes | None = None


@dataclass(frozen=True)
class R_CloseQueue(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 3
    pphContext: bytes | None = None


@dataclass(frozen=True)
class R_CloseQueueResult(Result):
    pphContext: bytes | None = None


@dataclass(frozen=True)
class R_CreateCursor(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 4
    phContext: bytes | None = None


@dataclass(frozen=True)
class R_CreateCursorResult(Result):
    phCursor: int = 0


@dataclass(frozen=True)
class R_CloseCursor(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 5
    phContext: bytes | None = None
    hCursor: int = 0


@dataclass(frozen=True)
class R_CloseCursorResult(Result):
    pass


@dataclass(frozen=True)
class R_PurgeQueue(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 6
    phContext: bytes | None = None


@dataclass(frozen=True)
class R_PurgeQueueResult(Result):
    pass


@dataclass(frozen=True)
class R_StartReceive(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 7
    phContext: bytes | None = None
    LookupId: int = 0
    hCursor: int = 0
    ulAction: int = MQ_ACTION_RECEIVE
    ulTimeout: int = 0
    dwRequestId: int = 0
    dwMaxBodySize: int = 0
    dwMaxCompoundMessageSize: int = 0


@dataclass(frozen=True)
class R_StartReceiveResult(Result):
    pdwArriveTime: int = 0
    pSequenceId: int = 0
    pdwNumberOfSections: int = 0
    ppPacketSections: tuple[SectionBuffer, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class R_CancelReceive(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 8
    phContext: bytes | None = None
    dwRequestId: int = 0


@dataclass(frozen=True)
class R_CancelReceiveResult(Result):
    pass


@dataclass(frozen=True)
class R_EndReceive(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 9
    phContext: bytes | None = None
    dwAck: int = RR_ACK
    dwRequestId: int = 0


@dataclass(frozen=True)
class R_EndReceiveResult(Result):
    pass


@dataclass(frozen=True)
class R_MoveMessage(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 10
    phContextFrom: bytes | None = None
    ullContextTo: int = 0
    LookupId: int = 0
    pTransactionId: bytes | None = None


@dataclass(frozen=True)
class R_MoveMessageResult(Result):
    pass


@dataclass(frozen=True)
class R_OpenQueueForMove(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 11
    pQueueFormat: Any = None
    dwAccess: int = MQ_MOVE_ACCESS
    dwShareMode: int = MQ_DENY_NONE
    pClientId: uuid.UUID | None = None
    fNonRoutingServer: int = 1
    Major: int = 0
    Minor: int = 0
    BuildNumber: int = 0
    fWorkgroup: int = 0


@dataclass(frozen=True)
class R_OpenQueueForMoveResult(Result):
    pMoveContext: int = 0
    pphContext: bytes | None = None


@dataclass(frozen=True)
class R_QMEnlistRemoteTransaction(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 12
    pTransactionId: bytes | None = None
    cbPropagationToken: int = 0
    pbPropagationToken: bytes = b""
    pQueueFormat: Any = None


@dataclass(frozen=True)
class R_QMEnlistRemoteTransactionResult(Result):
    pass


@dataclass(frozen=True)
class R_StartTransactionalReceive(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 13
    phContext: bytes | None = None
    LookupId: int = 0
    hCursor: int = 0
    ulAction: int = MQ_ACTION_RECEIVE
    ulTimeout: int = 0
    dwRequestId: int = 0
    dwMaxBodySize: int = 0
    dwMaxCompoundMessageSize: int = 0
    pTransactionId: bytes | None = None


@dataclass(frozen=True)
class R_StartTransactionalReceiveResult(Result):
    pdwArriveTime: int = 0
    pSequenceId: int = 0
    pdwNumberOfSections: int = 0
    ppPacketSections: tuple[SectionBuffer, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class R_SetUserAcknowledgementClass(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 14
    phContext: bytes | None = None
    LookupId: int = 0
    usClass: int = 0


@dataclass(frozen=True)
class R_SetUserAcknowledgementClassResult(Result):
    pass


@dataclass(frozen=True)
class R_EndTransactionalReceive(Call):
    interface: ClassVar[str] = REMOTEREAD
    opnum: ClassVar[int] = 15
    phContext: bytes | None = None
    dwAck: int = RR_ACK
    dwRequestId: int = 0


@dataclass(frozen=True)
class R_EndTransactionalReceiveResult(Result):
    pass


# ---------------------------------------------------------------------------------------------
# qmmgmt (MS-MQMR), uuid 41208ee0-e970-11d1-9b9e-00e02c064c39 v1.0
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class R_QMMgmtGetInfo(Call):
    interface: ClassVar[str] = QMMGMT
    opnum: ClassVar[int] = 0
    pObjectFormat: Any = None
    cp: int = 0
    aProp: tuple[int, ...] = ()
    apVar: tuple[PropVariant, ...] = ()


@dataclass(frozen=True)
class R_QMMgmtGetInfoResult(Result):
    apVar: tuple[PropVariant, ...] = ()


@dataclass(frozen=True)
class R_QMMgmtAction(Call):
    interface: ClassVar[str] = QMMGMT
    opnum: ClassVar[int] = 1
    pObjectFormat: Any = None
    lpwszAction: str | None = None


@dataclass(frozen=True)
class R_QMMgmtActionResult(Result):
    pass


# ---------------------------------------------------------------------------------------------
# Lookup tables
# ---------------------------------------------------------------------------------------------

CALLS: dict[tuple[str, int], type[Call]] = {
    (c.interface, c.opnum): c
    for c in (R_GetServerPort, R_OpenQueue, R_CloseQueue, R_CreateCursor, R_CloseCursor,
              R_PurgeQueue, R_StartReceive, R_CancelReceive, R_EndReceive, R_MoveMessage,
              R_OpenQueueForMove, R_QMEnlistRemoteTransaction, R_StartTransactionalReceive,
              R_SetUserAcknowledgementClass, R_EndTransactionalReceive, R_QMMgmtGetInfo,
              R_QMMgmtAction)
}
#: each call type by its method name (a calls table's ``method``, a target file's step)
BY_NAME: dict[str, type[Call]] = {c.__name__: c for c in CALLS.values()}
RESULTS: dict[type[Call], type[Result]] = {c: globals()[c.__name__ + "Result"]
                                           for c in CALLS.values()}
#: void methods: failures are thrown as RPC exceptions, not returned
VOID_METHODS = frozenset({R_OpenQueue, R_OpenQueueForMove})
