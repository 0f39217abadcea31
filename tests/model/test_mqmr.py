"""MS-MQMR 3.1: the qmmgmt server model, R_QMMgmtGetInfo and R_QMMgmtAction."""

from __future__ import annotations

import struct
import uuid

import pytest

from mqconform.model import calls as c
from mqconform.model import mqmr
from mqconform.model.adm import (
    GUID_NULL,
    SEQUENCE_INFO,
    ConnectionHistoryEntry,
    ConnectionHistoryStatus,
    IncomingTransactionalTransferInfo,
    MessagePositionState,
    OutgoingQueue,
    OutgoingQueueState,
    OutgoingTransferInfo,
    Queue,
    QueueType,
    TxSequenceId,
)
from mqconform.model.formats import (
    MgmtObject,
    MgmtObjectType,
    QueueFormat,
    parse_format_name,
    to_queue_format,
)
from mqconform.model.mqmr import (
    MACHINE_PROPERTIES,
    QUEUE_PROPERTIES,
    VT_BLOB,
    VT_CLSID,
    VT_I4,
    VT_I8,
    VT_LPWSTR,
    VT_NULL,
    VT_UI4,
    VT_UI8,
    VT_VARIANT,
    VT_VECTOR,
    QMMgmtServer,
    resent,
)
from mqconform.model.status import (
    MQ_ERROR,
    MQ_ERROR_ACCESS_DENIED,
    MQ_ERROR_ILLEGAL_PROPID,
    MQ_ERROR_INVALID_PARAMETER,
    MQ_ERROR_QUEUE_NOT_FOUND,
    MQ_OK,
    is_failure,
)

PV = c.PropVariant
NULL = PV(VT_NULL)
REMOTE = "DIRECT=TCP:10.0.0.2\\private$\\remote"
LOCAL = "DIRECT=OS:MQREF\\private$\\orders"
MACHINE = MgmtObject(MgmtObjectType.MGMT_MACHINE)
SENDER = uuid.UUID("0b0b0b0b-0000-4000-8000-000000000002")


def queue_object(name: str = LOCAL) -> MgmtObject:
    return MgmtObject(MgmtObjectType.MGMT_QUEUE, to_queue_format(parse_format_name(name)))


def get_info(obj: MgmtObject, *props: int) -> c.R_QMMgmtGetInfo:
    return c.R_QMMgmtGetInfo(pObjectFormat=obj, cp=len(props), aProp=props,
                             apVar=(NULL,) * len(props))


class Rig:
    """A queue manager with a private queue (messages, journal, subqueue, incoming sequence
    information) and an outgoing queue (transfer information, connection history)."""

    def __init__(self, world):
        self.world = world
        self.env = world.env
        self.qm = world.qm
        self.server = QMMgmtServer(self.env)
        self.journal = Queue(pathname="MQREF\\private$\\orders;journal",
                             queue_type=QueueType.Private, queue_manager=self.qm)
        self.orders = world.queue("MQREF\\private$\\orders", transactional=True,
                                  qualified_pathname="mqref.example.com\\private$\\orders",
                                  journaling=True, journal_queue_reference=self.journal)
        self.poison = Queue(pathname="MQREF\\private$\\orders;poison",
                            queue_type=QueueType.Private, queue_manager=self.qm)
        self.orders.subqueue_collection.append(self.poison)
        self.incoming = IncomingTransactionalTransferInfo(
            queue_reference=self.orders, format_name=LOCAL, sender_identifier=SENDER,
            sequence_identifier=TxSequenceId(ordinal=7, time_stamp=0x5000),
            sequence_number=12, last_access_time=1_700_000_000, reject_count=2)
        self.orders.incoming_transactional_transfer_info_collection.append(self.incoming)
        self.other = world.queue("MQREF\\public", queue_type=QueueType.Public)
        self.first = world.send(self.orders, b"hello")
        self.second = world.send(self.orders, b"world!")
        world.send(self.journal, b"old")
        self.info = OutgoingTransferInfo(
            eod_first_non_ack=SEQUENCE_INFO(5, 2, 1), eod_last_ack=SEQUENCE_INFO(5, 1, 0),
            eod_last_ack_count=3, eod_last_ack_time=1_700_000_100,
            eod_last_non_ack=SEQUENCE_INFO(5, 4, 3), eod_next_seq=SEQUENCE_INFO(5, 5, 4),
            eod_no_ack_count=3, eod_no_read_count=1, eod_resend_count=6,
            eod_resend_interval=30, eod_resend_time=1_700_000_200)
        self.outgoing = OutgoingQueue(
            queue_manager=self.qm, destination_format_name=REMOTE, label=REMOTE,
            qualified_pathname="remote.example.com\\private$\\remote",
            next_hops=["IP=10.0.0.2"], state=OutgoingQueueState.Connected,
            outgoing_transfer_info_reference=self.info,
            connection_history=[ConnectionHistoryEntry(
                status=ConnectionHistoryStatus.PingFailure, connection_history_time=99,
                error=-5, address_list=["IP=10.0.0.2", "IP=10.0.0.3"])])
        self.info.outgoing_queue_reference = self.outgoing
        self.qm.queue_collection.append(self.outgoing)

    def get(self, obj: MgmtObject, *props: int, admin: bool = True):
        return self.server.call(get_info(obj, *props), caller_is_administrator=admin)

    def value(self, obj: MgmtObject, prop: int) -> c.PropVariant:
        outcome = self.get(obj, prop)
        assert outcome.status == MQ_OK, hex(outcome.status)
        return outcome.result.apVar[0]

    def action(self, obj: MgmtObject, action: str, admin: bool = True):
        return self.server.call(c.R_QMMgmtAction(pObjectFormat=obj, lpwszAction=action),
                                caller_is_administrator=admin)


@pytest.fixture
def rig(world) -> Rig:
    return Rig(world)


def seq(info: SEQUENCE_INFO) -> bytes:
    return struct.pack("<qII", info.seq_id, info.seq_no, info.prev_no)


# ---------------------------------------------------------------------------------------------
# the tables
# ---------------------------------------------------------------------------------------------

def test_property_tables_have_every_identifier_of_2_2_3_with_its_vartype():
    assert sorted(MACHINE_PROPERTIES) == list(range(1, 7))
    assert sorted(QUEUE_PROPERTIES) == list(range(1, 28))
    assert {p.name: p.vt for p in MACHINE_PROPERTIES.values()} == {
        "PROPID_MGMT_MSMQ_ACTIVEQUEUES": VT_VECTOR | VT_LPWSTR,
        "PROPID_MGMT_MSMQ_PRIVATEQ": VT_VECTOR | VT_LPWSTR,
        "PROPID_MGMT_MSMQ_DSSERVER": VT_LPWSTR, "PROPID_MGMT_MSMQ_CONNECTED": VT_LPWSTR,
        "PROPID_MGMT_MSMQ_TYPE": VT_LPWSTR, "PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES": VT_I8}
    assert QUEUE_PROPERTIES[mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO].vt == 0x100C
    assert QUEUE_PROPERTIES[mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK].vt == VT_BLOB == 65
    assert (VT_NULL, VT_I4, VT_UI4, VT_I8, VT_LPWSTR, VT_CLSID) == (1, 3, 19, 20, 31, 72)
    for propid, row in QUEUE_PROPERTIES.items():
        assert getattr(mqmr, row.name) == propid


@pytest.mark.req("MS-MQMR/2.1/R1", "MS-MQMR/2.2/R1", "MS-MQMR/3.1.4/R1", "MS-MQMR/3.1.4/R2",
                 "MS-MQMR/3.1.4/R3")
def test_rpc_settings_ask_for_strict_ndr_null_pointer_and_context_handle_checks():
    settings = mqmr.QMMGMT_RPC_SETTINGS
    assert settings.uuid == c.QMMGMT_UUID and settings.version == (1, 0)
    assert settings.transfer_syntaxes == ("NDR",)
    assert settings.strict_ndr_consistency_check_target_level == "6.0"
    assert settings.reject_null_pointer_with_nonzero_conformant_value
    assert settings.strict_context_handle


# ---------------------------------------------------------------------------------------------
# 3.1.4.1 machine properties
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQMR/3.1.4.1/R9", "MS-MQMR/3.1.4.1/R12", "MS-MQMR/3.1.4.1/R17",
                 "MS-MQMR/3.1.4.1/R18", "MS-MQMR/3.1.4.1/R19", "MS-MQMR/3.1.4.1/R4",
                 "MS-MQMR/3.1.4.1/R11")
def test_every_machine_property_has_its_vartype_and_value(rig, world):
    world.open(rig.other)  # an open descriptor makes the public queue active
    rig.qm.directory_integrated = True
    rig.qm.directory_server_list = ["dc1.example.com", "dc2.example.com"]
    rig.qm.connection_active = True
    outcome = rig.get(MACHINE, *range(1, 7))
    assert outcome.status == MQ_OK and outcome.rule == "MS-MQMR/3.1.4.1/R9"
    assert c.R_QMMgmtGetInfo.opnum == 0
    total = sum(q.total_bytes for q in rig.qm.queue_collection)
    assert total == len(b"hello") + len(b"world!")
    assert outcome.result.apVar == (
        # the outgoing queue holds no message and is not open: not active
        PV(VT_VECTOR | VT_LPWSTR, ["MQREF\\public"]),
        PV(VT_VECTOR | VT_LPWSTR, ["MQREF\\private$\\orders"]),
        PV(VT_LPWSTR, "dc1.example.com"),
        PV(VT_LPWSTR, "CONNECTED"),
        PV(VT_LPWSTR, ""),
        PV(VT_I8, total))
    assert not outcome.result.raised


@pytest.mark.req("MS-MQMR/3.1.4.1/R18")
def test_machine_properties_follow_the_queue_manager(rig, world):
    rig.qm.connection_active = False
    world.open(rig.orders)
    assert rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_CONNECTED) == PV(VT_LPWSTR, "DISCONNECTED")
    # not integrated with a directory: VT_NULL
    assert rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_DSSERVER) == NULL
    assert rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_ACTIVEQUEUES) == PV(
        VT_VECTOR | VT_LPWSTR, ["MQREF\\private$\\orders"])
    # an outgoing queue holding a message is active; it has no path name of its own
    world.send(rig.outgoing, b"out")
    assert rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_ACTIVEQUEUES).value == [
        "MQREF\\private$\\orders", REMOTE]


# ---------------------------------------------------------------------------------------------
# 3.1.4.1 queue properties
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQMR/3.1.4.1/R13", "MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R21",
                 "MS-MQMR/3.1.4.1/R22", "MS-MQMR/3.1.4.1/R23", "MS-MQMR/3.1.4.1/R24",
                 "MS-MQMR/3.1.4.1/R25", "MS-MQMR/3.1.4.1/R27", "MS-MQMR/3.1.4.1/R30",
                 "MS-MQMR/3.1.4.1/R33", "MS-MQMR/3.1.4.1/R34", "MS-MQMR/3.1.4.1/R39",
                 "MS-MQMR/3.1.4.1/R40", "MS-MQMR/3.1.4.1/R41", "MS-MQMR/3.1.4.1/R9")
def test_every_queue_property_of_a_local_queue(rig):
    rig.first.message_position_reference.state = MessagePositionState.Locked
    outcome = rig.get(queue_object(), *range(1, 28))
    assert outcome.status == MQ_OK
    ap = dict(zip(range(1, 28), outcome.result.apVar, strict=True))
    assert ap[mqmr.PROPID_MGMT_QUEUE_PATHNAME] == PV(VT_LPWSTR, "MQREF\\private$\\orders")
    assert ap[mqmr.PROPID_MGMT_QUEUE_FORMATNAME] == PV(
        VT_LPWSTR, "mqref.example.com\\private$\\orders")
    assert ap[mqmr.PROPID_MGMT_QUEUE_TYPE] == PV(VT_LPWSTR, "PRIVATE")
    assert ap[mqmr.PROPID_MGMT_QUEUE_LOCATION] == PV(VT_LPWSTR, "LOCAL")
    assert ap[mqmr.PROPID_MGMT_QUEUE_XACT] == PV(VT_LPWSTR, "YES")
    assert ap[mqmr.PROPID_MGMT_QUEUE_FOREIGN] == PV(VT_LPWSTR, "NO")
    assert ap[mqmr.PROPID_MGMT_QUEUE_MESSAGE_COUNT] == PV(VT_UI4, 2)
    assert ap[mqmr.PROPID_MGMT_QUEUE_BYTES_IN_QUEUE] == PV(VT_UI4, 11)
    assert ap[mqmr.PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT] == PV(VT_UI4, 1)
    assert ap[mqmr.PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL] == PV(VT_UI4, 3)
    assert ap[mqmr.PROPID_MGMT_QUEUE_STATE] == PV(VT_LPWSTR, "LOCAL CONNECTION")
    # the rows of an outgoing queue give a local queue no value: VT_NULL
    for propid in (*range(12, 24), mqmr.PROPID_MGMT_QUEUE_CONNECTION_HISTORY):
        assert ap[propid] == NULL, propid
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO] == PV(VT_VECTOR | VT_VARIANT, [
        PV(VT_VECTOR | VT_LPWSTR, [LOCAL]), PV(VT_VECTOR | VT_CLSID, [SENDER]),
        PV(VT_VECTOR | VT_UI8, [0x5000_00000007]), PV(VT_VECTOR | VT_UI4, [12]),
        PV(VT_VECTOR | VT_I4, [1_700_000_000]), PV(VT_VECTOR | VT_UI4, [2])])
    assert ap[mqmr.PROPID_MGMT_QUEUE_SUBQUEUE_COUNT] == PV(VT_UI4, 1)
    assert ap[mqmr.PROPID_MGMT_QUEUE_SUBQUEUE_NAMES] == PV(VT_VECTOR | VT_VARIANT,
                                                            [PV(VT_LPWSTR, "poison")])
    # the descriptor Open Queue made is closed again: the queue is not left active
    assert rig.orders.open_queue_descriptor_collection == []


@pytest.mark.req("MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27", "MS-MQMR/3.1.4.1/R42")
def test_every_queue_property_of_an_outgoing_queue(rig, world):
    world.send(rig.outgoing, b"in transit")
    outcome = rig.get(queue_object(REMOTE), *range(1, 28))
    assert outcome.status == MQ_OK
    ap = dict(zip(range(1, 28), outcome.result.apVar, strict=True))
    info = rig.info
    assert ap[mqmr.PROPID_MGMT_QUEUE_PATHNAME] == PV(VT_LPWSTR, "")
    assert ap[mqmr.PROPID_MGMT_QUEUE_FORMATNAME] == PV(
        VT_LPWSTR, "remote.example.com\\private$\\remote")
    assert ap[mqmr.PROPID_MGMT_QUEUE_TYPE] == NULL  # no QueueType, not multicast
    assert ap[mqmr.PROPID_MGMT_QUEUE_LOCATION] == PV(VT_LPWSTR, "REMOTE")
    assert ap[mqmr.PROPID_MGMT_QUEUE_XACT] == PV(VT_LPWSTR, "NO")
    assert ap[mqmr.PROPID_MGMT_QUEUE_MESSAGE_COUNT] == PV(VT_UI4, 1)
    assert ap[mqmr.PROPID_MGMT_QUEUE_BYTES_IN_QUEUE] == PV(VT_UI4, len(b"in transit"))
    assert ap[mqmr.PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT] == PV(VT_UI4, 0)
    assert ap[mqmr.PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL] == PV(VT_UI4, 0)
    assert ap[mqmr.PROPID_MGMT_QUEUE_STATE] == PV(VT_LPWSTR, "CONNECTED")
    assert ap[mqmr.PROPID_MGMT_QUEUE_NEXTHOPS] == PV(VT_VECTOR | VT_LPWSTR, ["IP=10.0.0.2"])
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK] == PV(VT_BLOB, seq(info.eod_last_ack))
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME] == PV(VT_I4, 1_700_000_100)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT] == PV(VT_UI4, 3)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK] == PV(VT_BLOB,
                                                              seq(info.eod_first_non_ack))
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK] == PV(VT_BLOB,
                                                             seq(info.eod_last_non_ack))
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_NEXT_SEQ] == PV(VT_BLOB, seq(info.eod_next_seq))
    assert len(ap[mqmr.PROPID_MGMT_QUEUE_EOD_NEXT_SEQ].value) == 16
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_NO_READ_COUNT] == PV(VT_UI4, 1)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT] == PV(VT_UI4, 3)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_RESEND_TIME] == PV(VT_I4, 1_700_000_200)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_RESEND_INTERVAL] == PV(VT_UI4, 30)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_RESEND_COUNT] == PV(VT_UI4, 6)
    assert ap[mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO] == PV(VT_VECTOR | VT_VARIANT, [
        PV(VT_VECTOR | vt, []) for vt in (VT_LPWSTR, VT_CLSID, VT_UI8, VT_UI4, VT_I4, VT_UI4)])
    assert ap[mqmr.PROPID_MGMT_QUEUE_CONNECTION_HISTORY] == PV(VT_VECTOR | VT_VARIANT, [
        PV(VT_VECTOR | VT_UI4, [0x80000001]), PV(VT_VECTOR | VT_I4, [99]),
        PV(VT_VECTOR | VT_I4, [-5]), PV(VT_VECTOR | VT_LPWSTR, ["IP=10.0.0.2,IP=10.0.0.3"])])
    assert ap[mqmr.PROPID_MGMT_QUEUE_SUBQUEUE_COUNT] == PV(VT_UI4, 0)
    assert ap[mqmr.PROPID_MGMT_QUEUE_SUBQUEUE_NAMES] == PV(VT_VECTOR | VT_VARIANT, [])


def test_eod_last_ack_needs_unacknowledged_messages(rig):
    rig.info.eod_no_ack_count = 0
    assert rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK) == NULL


@pytest.mark.req("MS-MQMR/3.1.4.1/R17", "MS-MQMR/3.1.4.1/R20")
def test_eod_last_ack_has_its_octets_from_one_unacknowledged_message_on(rig):
    """EodNoAckCount > 0: one message awaiting its order acknowledgment is enough."""
    rig.info.eod_no_ack_count = 1
    rig.info.eod_last_ack = SEQUENCE_INFO(0x0102030405060708, 10, 9)
    assert rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_EOD_LAST_ACK) == PV(
        VT_BLOB, bytes.fromhex("0807060504030201 0A000000 09000000"))


@pytest.mark.parametrize("info, octets", [
    (SEQUENCE_INFO(0x0102030405060708, 11, 10), "0807060504030201 0B000000 0A000000"),
    (SEQUENCE_INFO(-2, 0xFFFFFFFF, 0), "FEFFFFFFFFFFFFFF FFFFFFFF 00000000"),
    (SEQUENCE_INFO(-(1 << 63), 1, 0xFFFFFFFE), "0000000000000080 01000000 FEFFFFFF"),
    (SEQUENCE_INFO(), "0000000000000000 00000000 00000000")])
def test_a_sequence_info_is_the_16_octets_of_ms_mqmq_2_2_5_1(info, octets):
    """SeqID a 64-bit signed integer, SeqNo and PrevNo 32-bit unsigned, little-endian."""
    assert mqmr.sequence_info_bytes(info) == bytes.fromhex(octets)


@pytest.mark.parametrize("sequence_id, value", [
    (TxSequenceId(ordinal=7, time_stamp=0x65000000), 0x6500000000000007),
    (TxSequenceId(ordinal=0xFFFFFFFF, time_stamp=0), 0x00000000FFFFFFFF),
    (TxSequenceId(ordinal=0, time_stamp=0xFFFFFFFF), 0xFFFFFFFF00000000)])
def test_a_tx_sequence_id_is_its_time_stamp_high_and_its_ordinal_low(sequence_id, value):
    """MS-MQMQ 2.2.18.1.2: a 64-bit unsigned value, Ordinal the low-order bytes."""
    assert mqmr.tx_sequence_id_value(sequence_id) == value


#: MS-MQMQ 2.3.12.25: the Status codes, in the order of MS-MQDMPR 3.1.1.3's Status values
STATUS_CODES = [
    ("InProcess", 0x00000000), ("EstablishPacketReceived", 0x00000001),
    ("Established", 0x00000002), ("UnknownFailure", 0x80000000), ("PingFailure", 0x80000001),
    ("SocketCreateFailure", 0x80000002), ("SocketBindFailure", 0x80000003),
    ("SocketConnectFailure", 0x80000004), ("TcpNotEnabled", 0x80000005),
    ("SocketSendFailure", 0x80000006), ("ConnectionNotReady", 0x80000007),
    ("DnsFailure", 0x80000008), ("CertificateValidationFailure", 0x80000009),
    ("ConnectionLimitReached", 0x8000000A), ("ConnectionRefused", 0x8000000B),
    ("RoutingDataNotAvailable", 0x8000000C), ("LowResource", 0x8000000D)]


def test_the_status_codes_cover_every_status_value_in_document_order():
    assert [name for name, _ in STATUS_CODES] == list(ConnectionHistoryStatus.__members__)


@pytest.mark.req("MS-MQMR/3.1.4.1/R20", "MS-MQDMPR/3.1.1.3/R2")
@pytest.mark.parametrize("name, code", STATUS_CODES)
def test_connection_history_reports_each_status_with_its_ms_mqmq_code(rig, name, code):
    rig.outgoing.connection_history = [ConnectionHistoryEntry(
        status=ConnectionHistoryStatus[name], connection_history_time=1_700_000_000,
        error=-2147467259, address_list=["10.1.2.3"])]
    value = rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_CONNECTION_HISTORY)
    assert value == PV(VT_VECTOR | VT_VARIANT, [
        PV(VT_VECTOR | VT_UI4, [code]), PV(VT_VECTOR | VT_I4, [1_700_000_000]),
        PV(VT_VECTOR | VT_I4, [-2147467259]), PV(VT_VECTOR | VT_LPWSTR, ["10.1.2.3"])])


def test_an_outgoing_queue_without_an_outgoing_transfer_info_reports_no_eod_value(rig):
    """Choice 2: the rows read OutgoingTransferInfoReference, which is NULL; the entries stay
    VT_NULL (SOURCE_INFO reads the queue's own collection, empty here)."""
    rig.outgoing.outgoing_transfer_info_reference = None
    outcome = rig.get(queue_object(REMOTE), *range(13, 25))
    assert outcome.status == MQ_OK
    *eod, source_info = outcome.result.apVar
    assert eod == [NULL] * 11
    assert source_info == PV(VT_VECTOR | VT_VARIANT, [
        PV(VT_VECTOR | vt, []) for vt in (VT_LPWSTR, VT_CLSID, VT_UI8, VT_UI4, VT_I4, VT_UI4)])


@pytest.mark.req("MS-MQMR/3.1.4.1/R28", "MS-MQMR/3.1.4.1/R29", "MS-MQMR/3.1.4.1/R30",
                 "MS-MQMR/3.1.4.1/R31", "MS-MQMR/3.1.4.1/R32")
@pytest.mark.parametrize("queue_type, multicast, expected", [
    (QueueType.Public, True, "MULTICAST"), (QueueType.Public, False, "PUBLIC"),
    (QueueType.Private, False, "PRIVATE"), (QueueType.System, False, "MACHINE"),
    (QueueType.Connector, False, "CONNECTOR")])
def test_queue_type_names_the_kind_of_queue(rig, queue_type, multicast, expected):
    rig.outgoing.queue_type = queue_type
    rig.outgoing.multicast = multicast
    assert rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_TYPE) == PV(VT_LPWSTR,
                                                                              expected)


@pytest.mark.req("MS-MQMR/3.1.4.1/R35", "MS-MQMR/3.1.4.1/R36", "MS-MQMR/3.1.4.1/R37",
                 "MS-MQMR/3.1.4.1/R38", "MS-MQMR/3.1.4.1/R39")
@pytest.mark.parametrize("offline, foreign, queue_type, expected", [
    (True, False, QueueType.Private, "NO"), (True, True, QueueType.Public, "Unknown"),
    (False, True, QueueType.Private, "YES"), (False, False, QueueType.Public, "NO")])
def test_queue_foreign_follows_directory_offline_and_foreign_system(rig, offline, foreign,
                                                                    queue_type, expected):
    rig.qm.directory_offline = offline
    rig.qm.foreign_system = foreign
    rig.orders.queue_type = queue_type
    assert rig.value(queue_object(), mqmr.PROPID_MGMT_QUEUE_FOREIGN) == PV(VT_LPWSTR, expected)


@pytest.mark.req("MS-MQMR/3.1.4.1/R41", "MS-MQMR/3.1.4.1/R42", "MS-MQMR/3.1.4.1/R43",
                 "MS-MQMR/3.1.4.1/R44", "MS-MQMR/3.1.4.1/R45", "MS-MQMR/3.1.4.1/R46",
                 "MS-MQMR/3.1.4.1/R47")
@pytest.mark.parametrize("state, expected", [
    (OutgoingQueueState.Connected, "CONNECTED"), (OutgoingQueueState.Disconnected,
                                                  "DISCONNECTED"),
    (OutgoingQueueState.Disconnecting, "DISCONNECTING"), (OutgoingQueueState.Inactive,
                                                          "INACTIVE"),
    (OutgoingQueueState.Locked, "LOCKED"), (OutgoingQueueState.NeedValidation,
                                            "NEED VALIDATION"),
    (OutgoingQueueState.Waiting, "WAITING"), (OutgoingQueueState.OnHold, "ONHOLD")])
def test_queue_state_names_the_outgoing_queue_state(rig, state, expected):
    rig.outgoing.state = state
    assert rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_STATE) == PV(VT_LPWSTR,
                                                                               expected)


@pytest.mark.parametrize("state, multicast, expected", [
    (OutgoingQueueState.Connected, True, ["remote.example.com\\private$\\remote"]),
    (OutgoingQueueState.Waiting, False, ["IP=10.0.0.2", "IP=10.0.0.9"]),
    (OutgoingQueueState.Inactive, False, None)])
def test_next_hops_by_state(rig, state, multicast, expected):
    rig.outgoing.state = state
    rig.outgoing.multicast = multicast
    rig.outgoing.next_hops = ["IP=10.0.0.2", "IP=10.0.0.9"]
    value = rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_NEXTHOPS)
    assert value == (NULL if expected is None else PV(VT_VECTOR | VT_LPWSTR, expected))


def test_journal_bytes_are_zero_without_journaling(rig):
    rig.orders.journaling = False
    assert rig.value(queue_object(), mqmr.PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL) == PV(VT_UI4, 0)
    assert rig.value(queue_object(), mqmr.PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT) == PV(
        VT_UI4, 1)


@pytest.mark.req("MS-MQMR/3.1.4.1/R20", "MS-MQMR/3.1.4.1/R27", "MS-MQDMPR/3.1.7.2.1/R5")
def test_journal_counts_grow_by_each_message_received_from_a_journaled_queue(rig, world):
    """A receive from a queue with Journaling True leaves a copy in its JournalQueueReference
    (model/consumed.py choice 2): the journal rows count it, the queue rows no longer do."""
    from mqconform.model.message_ops import dequeue_message

    desc = world.open(rig.orders)
    received = world.env.call(dequeue_message(world.env, desc, timeout=0))
    assert received.status == MQ_OK and received.message is rig.first  # b"hello"
    outcome = rig.get(queue_object(), mqmr.PROPID_MGMT_QUEUE_MESSAGE_COUNT,
                      mqmr.PROPID_MGMT_QUEUE_BYTES_IN_QUEUE,
                      mqmr.PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT,
                      mqmr.PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL)
    assert outcome.status == MQ_OK
    assert list(outcome.result.apVar) == [PV(VT_UI4, 1), PV(VT_UI4, len(b"world!")),
                                          PV(VT_UI4, 2), PV(VT_UI4, len(b"old" + b"hello"))]
    # the machine's total counts the queues of QueueCollection: the journal is not one of them
    total = rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES)
    assert total == PV(VT_I8, sum(q.total_bytes for q in world.qm.queue_collection))
    assert rig.journal not in world.qm.queue_collection


# ---------------------------------------------------------------------------------------------
# 3.1.4.1 failures
# ---------------------------------------------------------------------------------------------

def assert_refused(outcome, status, rule):
    assert outcome.status == status and outcome.rule == rule
    assert outcome.any_failure and is_failure(outcome.status)
    assert outcome.result.apVar == ()  # no [out] parameter set
    assert not outcome.result.raised


@pytest.mark.req("MS-MQMR/3.1.4.1/R1", "MS-MQMR/3.1.4.1/R10")
@pytest.mark.parametrize("count", [0, 129])
def test_cp_outside_1_to_128_fails(rig, count):
    call = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=count, aProp=(1,) * count,
                             apVar=(NULL,) * count)
    assert_refused(rig.server.call(call), MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R1")


def test_cp_of_128_is_accepted(rig):
    call = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=128, aProp=(4,) * 128,
                             apVar=(NULL,) * 128)
    outcome = rig.server.call(call)
    assert outcome.status == MQ_OK and len(outcome.result.apVar) == 128


@pytest.mark.req("MS-MQMR/3.1.4.1/R2", "MS-MQMR/3.1.4.1/R5", "MS-MQMR/3.1.4.1/R6",
                 "MS-MQMR/3.1.4.1/R8", "MS-MQMR/3.1.4.1/R10")
def test_arrays_of_another_length_than_cp_fail(rig):
    short_props = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=2, aProp=(1,), apVar=(NULL,) * 2)
    assert_refused(rig.server.call(short_props), MQ_ERROR_INVALID_PARAMETER,
                   "MS-MQMR/3.1.4.1/R5")
    short_vars = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=2, aProp=(1, 2), apVar=(NULL,))
    assert_refused(rig.server.call(short_vars), MQ_ERROR_INVALID_PARAMETER,
                   "MS-MQMR/3.1.4.1/R8")


@pytest.mark.req("MS-MQMR/3.1.4.1/R3", "MS-MQMR/3.1.4.1/R15", "MS-MQMR/3.1.4.1/R16")
def test_unknown_property_identifier_fails_with_illegal_propid(rig):
    assert_refused(rig.get(MACHINE, 4, 7), MQ_ERROR_ILLEGAL_PROPID, "MS-MQMR/3.1.4.1/R15")
    assert_refused(rig.get(queue_object(), 1, 28), MQ_ERROR_ILLEGAL_PROPID,
                   "MS-MQMR/3.1.4.1/R16")


@pytest.mark.req("MS-MQMR/3.1.4.1/R7")
def test_apvar_entries_must_be_vt_null_on_input(rig):
    call = c.R_QMMgmtGetInfo(pObjectFormat=MACHINE, cp=1, aProp=(4,),
                             apVar=(PV(VT_LPWSTR, "x"),))
    assert_refused(rig.server.call(call), MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R7")


@pytest.mark.req("MS-MQMR/3.1.4.1/R14")
def test_get_info_on_a_session_fails(rig):
    outcome = rig.get(MgmtObject(MgmtObjectType.MGMT_SESSION), 1)
    assert_refused(outcome, MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R14")


@pytest.mark.req("MS-MQMR/3.1.4.1/R10")
@pytest.mark.parametrize("obj", [None, MgmtObject(7), MgmtObject(MgmtObjectType.MGMT_QUEUE),
                                 MgmtObject(MgmtObjectType.MGMT_QUEUE, QueueFormat(99))])
def test_malformed_object_fails(rig, obj):
    assert_refused(rig.get(obj, 1), MQ_ERROR_INVALID_PARAMETER, "MS-MQMR/3.1.4.1/R10")


@pytest.mark.req("MS-MQMR/3.1.4.1/R26", "MS-MQMR/3.1.4.1/R10")
def test_get_info_on_a_missing_queue_fails_with_mq_error(rig):
    outcome = rig.get(queue_object("DIRECT=OS:MQREF\\private$\\nothing"), 1)
    assert_refused(outcome, MQ_ERROR, "MS-MQMR/3.1.4.1/R26")
    assert outcome.conforms(c.R_QMMgmtGetInfoResult(status=MQ_ERROR_QUEUE_NOT_FOUND))


def test_get_info_fails_when_open_queue_meets_a_sharing_violation(rig, world):
    from mqconform.model.adm import QueueAccessType, QueueShareMode

    world.open(rig.orders, QueueAccessType.ReceiveAccess, QueueShareMode.DenyReceive)
    assert_refused(rig.get(queue_object(), 1), MQ_ERROR, "MS-MQMR/3.1.4.1/R26")


@pytest.mark.req("MS-MQMR/3/R1")
def test_non_administrator_is_refused(rig):
    outcome = rig.get(MACHINE, 1, admin=False)
    assert_refused(outcome, MQ_ERROR_ACCESS_DENIED, "MS-MQMR/3/R1")
    rig.qm.connection_active = True
    action = rig.action(MACHINE, "DISCONNECT", admin=False)
    assert action.status == MQ_ERROR_ACCESS_DENIED and action.any_failure
    assert action.rule == "MS-MQMR/3/R1"
    assert rig.qm.connection_active  # the Take Offline event was not generated


# ---------------------------------------------------------------------------------------------
# 3.1.4.2 R_QMMgmtAction
# ---------------------------------------------------------------------------------------------

@pytest.mark.req("MS-MQMR/3.1.4.2/R2", "MS-MQMR/3.1.4.2/R5", "MS-MQMR/3.1.4.2/R7",
                 "MS-MQMR/3.1.4.2/R8", "MS-MQMR/3.1.4.2/R9", "MS-MQMR/3.1.4.2/R13",
                 "MS-MQMR/3.1.4.2/R14", "MS-MQMR/3.1.4.2/R15")
def test_connect_and_disconnect_bring_the_queue_manager_online_and_offline(rig):
    assert c.R_QMMgmtAction.opnum == 1
    outcome = rig.action(MACHINE, "CONNECT")
    assert outcome.status == MQ_OK and outcome.rule == "MS-MQMR/3.1.4.2/R2"
    assert rig.qm.connection_active is True
    assert rig.action(MACHINE, "DISCONNECT").status == MQ_OK
    assert rig.qm.connection_active is False
    assert rig.value(MACHINE, mqmr.PROPID_MGMT_MSMQ_CONNECTED).value == "DISCONNECTED"


@pytest.mark.req("MS-MQMR/3.1.4.2/R1")
@pytest.mark.parametrize("spelling", ["connect", "Connect", "cOnNeCt"])
def test_actions_are_not_case_sensitive(rig, spelling):
    assert rig.action(MACHINE, spelling).status == MQ_OK
    assert rig.qm.connection_active is True


@pytest.mark.req("MS-MQMR/3.1.4.2/R10", "MS-MQMR/3.1.4.2/R16", "MS-MQMR/3.1.4.2/R17",
                 "MS-MQMR/3.1.4.2/R6")
def test_tidy_purges_every_queue(rig, world):
    world.send(rig.outgoing, b"out")
    locked = rig.first.message_position_reference
    locked.state = MessagePositionState.Locked
    assert rig.action(MACHINE, "TIDY").status == MQ_OK
    # available messages are deleted, the locked one is left PurgePending
    assert list(rig.orders.message_position_list) == [locked]
    assert locked.state is MessagePositionState.PurgePending
    assert len(rig.outgoing.message_position_list) == 0
    assert rig.orders.total_bytes == len(b"hello")
    # the journal is not in QueueCollection: it is not purged
    assert len(rig.journal.message_position_list) == 1


@pytest.mark.req("MS-MQMR/3.1.4.2/R11", "MS-MQMR/3.1.4.2/R12", "MS-MQMR/3.1.4.2/R18",
                 "MS-MQMR/3.1.4.2/R19", "MS-MQMR/3.1.4.2/R20", "MS-MQMR/3.1.4.2/R21")
def test_pause_and_resume_an_outgoing_queue(rig):
    assert rig.action(queue_object(REMOTE), "PAUSE").status == MQ_OK
    assert rig.outgoing.state is OutgoingQueueState.OnHold
    assert rig.value(queue_object(REMOTE), mqmr.PROPID_MGMT_QUEUE_STATE).value == "ONHOLD"
    assert rig.action(queue_object(REMOTE), "resume").status == MQ_OK
    assert rig.outgoing.state is OutgoingQueueState.Inactive


@pytest.mark.req("MS-MQMR/3.1.4.2/R4")
def test_pause_of_a_local_queue_fails(rig):
    outcome = rig.action(queue_object(), "PAUSE")
    assert outcome.status == MQ_ERROR_INVALID_PARAMETER and outcome.any_failure
    assert not hasattr(rig.orders, "state")


@pytest.mark.req("MS-MQMR/3.1.4.2/R22", "MS-MQMR/3.1.4.2/R23")
def test_eod_resend_generates_the_resend_event_for_the_queue(rig):
    assert rig.action(queue_object(REMOTE), "EOD_RESEND").status == MQ_OK
    assert [event.queue for event in resent(rig.env)] == [rig.outgoing]


@pytest.mark.req("MS-MQMR/3.1.4.2/R4")
def test_queue_action_on_a_missing_queue_fails(rig):
    outcome = rig.action(queue_object("DIRECT=TCP:10.9.9.9\\private$\\none"), "PAUSE")
    assert outcome.status == MQ_ERROR_QUEUE_NOT_FOUND and outcome.any_failure


@pytest.mark.req("MS-MQMR/3.1.4.2/R1", "MS-MQMR/3.1.4.2/R3", "MS-MQMR/3.1.4.2/R4")
@pytest.mark.parametrize("obj, action", [
    (MACHINE, "REBOOT"), (MACHINE, None), (MACHINE, ""), (MACHINE, "PAUSE"),
    (MACHINE, "T\u0131DY"),  # dotless i: upper-cases to TIDY, but is not the ASCII word
    (queue_object(REMOTE), "CONNECT")])
def test_unknown_action_fails_with_invalid_parameter(rig, obj, action):
    rig.qm.connection_active = False
    outcome = rig.action(obj, action)
    assert outcome.status == MQ_ERROR_INVALID_PARAMETER and outcome.any_failure
    assert outcome.rule == "MS-MQMR/3.1.4.2/R3"
    assert rig.qm.connection_active is False
    assert len(rig.orders.message_position_list) == 2


@pytest.mark.req("MS-MQMR/3.1.4.2/R3")
def test_action_on_a_session_fails(rig):
    outcome = rig.action(MgmtObject(MgmtObjectType.MGMT_SESSION), "CONNECT")
    assert outcome.status == MQ_ERROR_INVALID_PARAMETER and outcome.any_failure
    assert outcome.conforms(c.R_QMMgmtActionResult(status=MQ_ERROR))
    assert not outcome.conforms(c.R_QMMgmtActionResult(status=MQ_OK))


@pytest.mark.req("MS-MQMR/3.1.4/R4")
def test_methods_never_raise(rig):
    outcomes = [rig.get(MACHINE, 1), rig.get(None, 1), rig.action(MACHINE, "x"),
                rig.action(queue_object(REMOTE), "PAUSE")]
    assert all(not o.result.raised for o in outcomes)


def test_guid_null_sender_and_missing_sequence_are_zero(rig):
    rig.incoming.sender_identifier = GUID_NULL
    rig.incoming.sequence_identifier = None
    value = rig.value(queue_object(), mqmr.PROPID_MGMT_QUEUE_EOD_SOURCE_INFO).value
    assert value[1] == PV(VT_VECTOR | VT_CLSID, [GUID_NULL])
    assert value[2] == PV(VT_VECTOR | VT_UI8, [0])
