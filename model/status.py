"""The status codes the model returns: MSMQ HRESULTs and the NTSTATUS values MS-MQRR uses.

Sources (facts only; the descriptions are short paraphrases, not the documents' text):

* MSMQ HRESULTs: [MS-MQMQ] "Message Queuing (MSMQ): Data Structures", section 2.4 "Error
  Codes" (the MSMQ-specific HRESULT table), every row of it, in its order. Cross-checked
  against the Windows SDK header ``mq.h``, which gives the same names and values for every row
  except ``MQDS_UNKNOWN_SOURCE`` (it does not define that one).
* ``MQ_OK`` is not a row of that table; its value 0x00000000 is the one MS-MQRR and MS-MQDMPR
  give wherever they return it (and ``mq.h`` agrees).
* NTSTATUS values: as written next to their names in [MS-MQRR] section 3.1.4 (the handle,
  parameter and access codes) and [MS-MQDMPR] sections 3.1.3 and 3.1.7.1.17 (``STATUS_SUCCESS``,
  ``STATUS_NOT_FOUND``); [MS-ERREF] section 2.3 is the general catalogue. ``STATUS_SUCCESS``
  shares the value 0 with ``MQ_OK``; ``STATUS_NAMES`` maps 0 to ``"MQ_OK"``.

Every value is an unsigned 32-bit integer, as on the wire (``0xC00E0003``, never the signed
``-1072824317`` that some bindings print). Code returns the constants by name::

    return MQ_ERROR_QUEUE_NOT_AVAILABLE

``DESCRIPTIONS`` is the table (name -> one-line description); ``STATUS_NAMES`` (value -> name)
is derived from it and from the constants, so a name without a constant, or a constant without
a row, fails at import or in the tests rather than going unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# HRESULT bit 31, the severity bit that marks a failure; and FACILITY_MSMQ, the facility field
# (bits 16-28) of every MSMQ-specific HRESULT. Private, so that every public int is a status code.
_SEVERITY_FAILURE_BIT = 0x80000000
_FACILITY_MSMQ = 0x0E

# --- success -----------------------------------------------------------------------------------

MQ_OK = 0x00000000

# --- MS-MQMQ 2.4: information values (severity "informational", bit 31 clear) -----------------

MQ_INFORMATION_PROPERTY = 0x400E0001
MQ_INFORMATION_ILLEGAL_PROPERTY = 0x400E0002
MQ_INFORMATION_PROPERTY_IGNORED = 0x400E0003
MQ_INFORMATION_UNSUPPORTED_PROPERTY = 0x400E0004
MQ_INFORMATION_DUPLICATE_PROPERTY = 0x400E0005
MQ_INFORMATION_OPERATION_PENDING = 0x400E0006
MQ_INFORMATION_FORMATNAME_BUFFER_TOO_SMALL = 0x400E0009
MQ_INFORMATION_INTERNAL_USER_CERT_EXIST = 0x400E000A
MQ_INFORMATION_OWNER_IGNORED = 0x400E000B

# --- MS-MQMQ 2.4: error values -------------------------------------------------------------------

MQ_ERROR = 0xC00E0001
MQ_ERROR_PROPERTY = 0xC00E0002
MQ_ERROR_QUEUE_NOT_FOUND = 0xC00E0003
MQ_ERROR_QUEUE_NOT_ACTIVE = 0xC00E0004
MQ_ERROR_QUEUE_EXISTS = 0xC00E0005
MQ_ERROR_INVALID_PARAMETER = 0xC00E0006
MQ_ERROR_INVALID_HANDLE = 0xC00E0007
MQ_ERROR_OPERATION_CANCELLED = 0xC00E0008
MQ_ERROR_SHARING_VIOLATION = 0xC00E0009
MQ_ERROR_SERVICE_NOT_AVAILABLE = 0xC00E000B
MQ_ERROR_MACHINE_NOT_FOUND = 0xC00E000D
MQ_ERROR_ILLEGAL_SORT = 0xC00E0010
MQ_ERROR_ILLEGAL_USER = 0xC00E0011
MQ_ERROR_NO_DS = 0xC00E0013
MQ_ERROR_ILLEGAL_QUEUE_PATHNAME = 0xC00E0014
MQ_ERROR_ILLEGAL_PROPERTY_VALUE = 0xC00E0018
MQ_ERROR_ILLEGAL_PROPERTY_VT = 0xC00E0019
MQ_ERROR_BUFFER_OVERFLOW = 0xC00E001A
MQ_ERROR_IO_TIMEOUT = 0xC00E001B
MQ_ERROR_ILLEGAL_CURSOR_ACTION = 0xC00E001C
MQ_ERROR_MESSAGE_ALREADY_RECEIVED = 0xC00E001D
MQ_ERROR_ILLEGAL_FORMATNAME = 0xC00E001E
MQ_ERROR_FORMATNAME_BUFFER_TOO_SMALL = 0xC00E001F
MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION = 0xC00E0020
MQ_ERROR_ILLEGAL_SECURITY_DESCRIPTOR = 0xC00E0021
MQ_ERROR_SENDERID_BUFFER_TOO_SMALL = 0xC00E0022
MQ_ERROR_SECURITY_DESCRIPTOR_TOO_SMALL = 0xC00E0023
MQ_ERROR_CANNOT_IMPERSONATE_CLIENT = 0xC00E0024
MQ_ERROR_ACCESS_DENIED = 0xC00E0025
MQ_ERROR_PRIVILEGE_NOT_HELD = 0xC00E0026
MQ_ERROR_INSUFFICIENT_RESOURCES = 0xC00E0027
MQ_ERROR_USER_BUFFER_TOO_SMALL = 0xC00E0028
MQ_ERROR_MESSAGE_STORAGE_FAILED = 0xC00E002A
MQ_ERROR_SENDER_CERT_BUFFER_TOO_SMALL = 0xC00E002B
MQ_ERROR_INVALID_CERTIFICATE = 0xC00E002C
MQ_ERROR_CORRUPTED_INTERNAL_CERTIFICATE = 0xC00E002D
MQ_ERROR_INTERNAL_USER_CERT_EXIST = 0xC00E002E
MQ_ERROR_NO_INTERNAL_USER_CERT = 0xC00E002F
MQ_ERROR_CORRUPTED_SECURITY_DATA = 0xC00E0030
MQ_ERROR_CORRUPTED_PERSONAL_CERT_STORE = 0xC00E0031
MQ_ERROR_COMPUTER_DOES_NOT_SUPPORT_ENCRYPTION = 0xC00E0033
MQ_ERROR_BAD_SECURITY_CONTEXT = 0xC00E0035
MQ_ERROR_COULD_NOT_GET_USER_SID = 0xC00E0036
MQ_ERROR_COULD_NOT_GET_ACCOUNT_INFO = 0xC00E0037
MQ_ERROR_ILLEGAL_MQCOLUMNS = 0xC00E0038
MQ_ERROR_ILLEGAL_PROPID = 0xC00E0039
MQ_ERROR_ILLEGAL_RELATION = 0xC00E003A
MQ_ERROR_ILLEGAL_PROPERTY_SIZE = 0xC00E003B
MQ_ERROR_ILLEGAL_RESTRICTION_PROPID = 0xC00E003C
MQ_ERROR_ILLEGAL_MQQUEUEPROPS = 0xC00E003D
MQ_ERROR_PROPERTY_NOTALLOWED = 0xC00E003E
MQ_ERROR_INSUFFICIENT_PROPERTIES = 0xC00E003F
MQ_ERROR_MACHINE_EXISTS = 0xC00E0040
MQ_ERROR_ILLEGAL_MQQMPROPS = 0xC00E0041
MQ_ERROR_DS_IS_FULL = 0xC00E0042
MQ_ERROR_DS_ERROR = 0xC00E0043
MQ_ERROR_INVALID_OWNER = 0xC00E0044
MQ_ERROR_UNSUPPORTED_ACCESS_MODE = 0xC00E0045
MQ_ERROR_RESULT_BUFFER_TOO_SMALL = 0xC00E0046
MQ_ERROR_DELETE_CN_IN_USE = 0xC00E0048
MQ_ERROR_NO_RESPONSE_FROM_OBJECT_SERVER = 0xC00E0049
MQ_ERROR_OBJECT_SERVER_NOT_AVAILABLE = 0xC00E004A
MQ_ERROR_QUEUE_NOT_AVAILABLE = 0xC00E004B
MQ_ERROR_DTC_CONNECT = 0xC00E004C
MQ_ERROR_TRANSACTION_IMPORT = 0xC00E004E
MQ_ERROR_TRANSACTION_USAGE = 0xC00E0050
MQ_ERROR_TRANSACTION_SEQUENCE = 0xC00E0051
MQ_ERROR_MISSING_CONNECTOR_TYPE = 0xC00E0055
MQ_ERROR_STALE_HANDLE = 0xC00E0056
MQ_ERROR_TRANSACTION_ENLIST = 0xC00E0058
MQ_ERROR_QUEUE_DELETED = 0xC00E005A
MQ_ERROR_ILLEGAL_CONTEXT = 0xC00E005B
MQ_ERROR_ILLEGAL_SORT_PROPID = 0xC00E005C
MQ_ERROR_LABEL_TOO_LONG = 0xC00E005D
MQ_ERROR_LABEL_BUFFER_TOO_SMALL = 0xC00E005E
MQ_ERROR_MQIS_SERVER_EMPTY = 0xC00E005F
MQ_ERROR_MQIS_READONLY_MODE = 0xC00E0060
MQ_ERROR_SYMM_KEY_BUFFER_TOO_SMALL = 0xC00E0061
MQ_ERROR_SIGNATURE_BUFFER_TOO_SMALL = 0xC00E0062
MQ_ERROR_PROV_NAME_BUFFER_TOO_SMALL = 0xC00E0063
MQ_ERROR_ILLEGAL_OPERATION = 0xC00E0064
MQ_ERROR_WRITE_NOT_ALLOWED = 0xC00E0065
MQ_ERROR_WKS_CANT_SERVE_CLIENT = 0xC00E0066
MQ_ERROR_DEPEND_WKS_LICENSE_OVERFLOW = 0xC00E0067
MQ_CORRUPTED_QUEUE_WAS_DELETED = 0xC00E0068
MQ_ERROR_REMOTE_MACHINE_NOT_AVAILABLE = 0xC00E0069
MQ_ERROR_UNSUPPORTED_OPERATION = 0xC00E006A
MQ_ERROR_ENCRYPTION_PROVIDER_NOT_SUPPORTED = 0xC00E006B
MQ_ERROR_CANNOT_SET_CRYPTO_SEC_DESCR = 0xC00E006C
MQ_ERROR_CERTIFICATE_NOT_PROVIDED = 0xC00E006D
MQ_ERROR_Q_DNS_PROPERTY_NOT_SUPPORTED = 0xC00E006E
MQ_ERROR_CANNOT_CREATE_CERT_STORE = 0xC00E006F
MQ_ERROR_CANNOT_OPEN_CERT_STORE = 0xC00E0070
MQ_ERROR_ILLEGAL_ENTERPRISE_OPERATION = 0xC00E0071
MQ_ERROR_CANNOT_GRANT_ADD_GUID = 0xC00E0072
MQ_ERROR_CANNOT_LOAD_MSMQOCM = 0xC00E0073
MQ_ERROR_NO_ENTRY_POINT_MSMQOCM = 0xC00E0074
MQ_ERROR_NO_MSMQ_SERVERS_ON_DC = 0xC00E0075
MQ_ERROR_CANNOT_JOIN_DOMAIN = 0xC00E0076
MQ_ERROR_CANNOT_CREATE_ON_GC = 0xC00E0077
MQ_ERROR_GUID_NOT_MATCHING = 0xC00E0078
MQ_ERROR_PUBLIC_KEY_NOT_FOUND = 0xC00E0079
MQ_ERROR_PUBLIC_KEY_DOES_NOT_EXIST = 0xC00E007A
MQ_ERROR_ILLEGAL_MQPRIVATEPROPS = 0xC00E007B
MQ_ERROR_NO_GC_IN_DOMAIN = 0xC00E007C
MQ_ERROR_NO_MSMQ_SERVERS_ON_GC = 0xC00E007D
MQ_ERROR_CANNOT_GET_DN = 0xC00E007E
MQ_ERROR_CANNOT_HASH_DATA_EX = 0xC00E007F
MQ_ERROR_CANNOT_SIGN_DATA_EX = 0xC00E0080
MQ_ERROR_CANNOT_CREATE_HASH_EX = 0xC00E0081
MQ_ERROR_FAIL_VERIFY_SIGNATURE_EX = 0xC00E0082
MQ_ERROR_CANNOT_DELETE_PSC_OBJECTS = 0xC00E0083
MQ_ERROR_NO_MQUSER_OU = 0xC00E0084
MQ_ERROR_CANNOT_LOAD_MQAD = 0xC00E0085
MQ_ERROR_CANNOT_LOAD_MQDSSRV = 0xC00E0086
MQ_ERROR_PROPERTIES_CONFLICT = 0xC00E0087
MQ_ERROR_MESSAGE_NOT_FOUND = 0xC00E0088
MQ_ERROR_CANT_RESOLVE_SITES = 0xC00E0089
MQ_ERROR_NOT_SUPPORTED_BY_DEPENDENT_CLIENTS = 0xC00E008A
MQ_ERROR_OPERATION_NOT_SUPPORTED_BY_REMOTE_COMPUTER = 0xC00E008B
MQ_ERROR_NOT_A_CORRECT_OBJECT_CLASS = 0xC00E008C
MQ_ERROR_MULTI_SORT_KEYS = 0xC00E008D
MQ_ERROR_GC_NEEDED = 0xC00E008E
MQ_ERROR_DS_BIND_ROOT_FOREST = 0xC00E008F
MQ_ERROR_DS_LOCAL_USER = 0xC00E0090
MQ_ERROR_Q_ADS_PROPERTY_NOT_SUPPORTED = 0xC00E0091
MQ_ERROR_BAD_XML_FORMAT = 0xC00E0092
MQ_ERROR_UNSUPPORTED_CLASS = 0xC00E0093
MQ_ERROR_UNINITIALIZED_OBJECT = 0xC00E0094
MQ_ERROR_CANNOT_CREATE_PSC_OBJECTS = 0xC00E0095
MQ_ERROR_CANNOT_UPDATE_PSC_OBJECTS = 0xC00E0096
MQ_ERROR_RESOLVE_ADDRESS = 0xC00E0099
MQ_ERROR_TOO_MANY_PROPERTIES = 0xC00E009A
MQ_ERROR_MESSAGE_NOT_AUTHENTICATED = 0xC00E009B
MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION = 0xC00E009C
MQDS_UNKNOWN_SOURCE = 0xC00E0504

# --- NTSTATUS values used by MS-MQRR (and MS-MQDMPR) ---------------------------------------------

STATUS_SUCCESS = 0x00000000  # same value as MQ_OK; STATUS_NAMES[0] is "MQ_OK"
STATUS_INVALID_HANDLE = 0xC0000008
STATUS_INVALID_PARAMETER = 0xC000000D
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_NOT_FOUND = 0xC0000225

# --- the table: name -> one-line description -----------------------------------------------------

_DESCRIPTIONS: dict[str, str] = {
    "MQ_OK": "The operation succeeded.",
    # information values
    "MQ_INFORMATION_PROPERTY": "The call completed, but at least one property gave a warning.",
    "MQ_INFORMATION_ILLEGAL_PROPERTY": "A property identifier is not valid.",
    "MQ_INFORMATION_PROPERTY_IGNORED": "A property was ignored for this operation.",
    "MQ_INFORMATION_UNSUPPORTED_PROPERTY": "A property is unsupported and was ignored.",
    "MQ_INFORMATION_DUPLICATE_PROPERTY": "A property identifier was repeated; the repeat was "
                                         "ignored.",
    "MQ_INFORMATION_OPERATION_PENDING": "An asynchronous operation is still pending.",
    "MQ_INFORMATION_FORMATNAME_BUFFER_TOO_SMALL": "The queue was created, but the format name "
                                                  "did not fit in the buffer.",
    "MQ_INFORMATION_INTERNAL_USER_CERT_EXIST": "The user already has an internal MSMQ "
                                               "certificate.",
    "MQ_INFORMATION_OWNER_IGNORED": "The queue owner was left unchanged by this call.",
    # error values
    "MQ_ERROR": "A generic failure.",
    "MQ_ERROR_PROPERTY": "At least one property passed is not valid.",
    "MQ_ERROR_QUEUE_NOT_FOUND": "The queue does not exist, or the caller lacks permission for "
                                "the operation.",
    "MQ_ERROR_QUEUE_NOT_ACTIVE": "The queue is not open, or may not exist.",
    "MQ_ERROR_QUEUE_EXISTS": "A queue with this path name already exists.",
    "MQ_ERROR_INVALID_PARAMETER": "A parameter passed to the function is not valid.",
    "MQ_ERROR_INVALID_HANDLE": "A handle passed to the function is not valid.",
    "MQ_ERROR_OPERATION_CANCELLED": "The operation was cancelled before it completed.",
    "MQ_ERROR_SHARING_VIOLATION": "Sharing violation: the queue is already open for exclusive "
                                  "receive.",
    "MQ_ERROR_SERVICE_NOT_AVAILABLE": "The Message Queuing service is unavailable.",
    "MQ_ERROR_MACHINE_NOT_FOUND": "The given computer could not be found.",
    "MQ_ERROR_ILLEGAL_SORT": "The requested sort is not valid (for example, a repeated column).",
    "MQ_ERROR_ILLEGAL_USER": "The given user is not a valid user.",
    "MQ_ERROR_NO_DS": "No connection to Active Directory could be made.",
    "MQ_ERROR_ILLEGAL_QUEUE_PATHNAME": "The queue path name is not valid.",
    "MQ_ERROR_ILLEGAL_PROPERTY_VALUE": "A property value is not valid.",
    "MQ_ERROR_ILLEGAL_PROPERTY_VT": "A property's VARTYPE is not valid.",
    "MQ_ERROR_BUFFER_OVERFLOW": "A message property buffer was too small; the message stays in "
                                "the queue and the part that fit was copied.",
    "MQ_ERROR_IO_TIMEOUT": "The wait for a message timed out.",
    "MQ_ERROR_ILLEGAL_CURSOR_ACTION": "MQ_ACTION_PEEK_NEXT cannot be used at the cursor's "
                                      "current position.",
    "MQ_ERROR_MESSAGE_ALREADY_RECEIVED": "The message under the cursor was already removed by "
                                         "another receiver.",
    "MQ_ERROR_ILLEGAL_FORMATNAME": "The format name is not valid.",
    "MQ_ERROR_FORMATNAME_BUFFER_TOO_SMALL": "The format name buffer is too small.",
    "MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION": "The operation is not supported for this kind "
                                                 "of format name.",
    "MQ_ERROR_ILLEGAL_SECURITY_DESCRIPTOR": "The security descriptor is not valid.",
    "MQ_ERROR_SENDERID_BUFFER_TOO_SMALL": "The sender (user) ID buffer is too small.",
    "MQ_ERROR_SECURITY_DESCRIPTOR_TOO_SMALL": "The security descriptor buffer is too small.",
    "MQ_ERROR_CANNOT_IMPERSONATE_CLIENT": "The RPC server could not impersonate the client, so "
                                          "its credentials cannot be checked.",
    "MQ_ERROR_ACCESS_DENIED": "Access denied.",
    "MQ_ERROR_PRIVILEGE_NOT_HELD": "The client lacks the privileges the operation needs.",
    "MQ_ERROR_INSUFFICIENT_RESOURCES": "Not enough resources to perform the operation.",
    "MQ_ERROR_USER_BUFFER_TOO_SMALL": "The caller's buffer is too small for the returned data.",
    "MQ_ERROR_MESSAGE_STORAGE_FAILED": "A recoverable or journal message could not be stored; "
                                       "it was not sent.",
    "MQ_ERROR_SENDER_CERT_BUFFER_TOO_SMALL": "The user certificate buffer is too small.",
    "MQ_ERROR_INVALID_CERTIFICATE": "The user certificate is not valid.",
    "MQ_ERROR_CORRUPTED_INTERNAL_CERTIFICATE": "The internal MSMQ certificate is corrupt.",
    "MQ_ERROR_INTERNAL_USER_CERT_EXIST": "The user already has an internal MSMQ certificate.",
    "MQ_ERROR_NO_INTERNAL_USER_CERT": "The user has no internal MSMQ certificate.",
    "MQ_ERROR_CORRUPTED_SECURITY_DATA": "A cryptographic function failed.",
    "MQ_ERROR_CORRUPTED_PERSONAL_CERT_STORE": "The personal certificate store is corrupt.",
    "MQ_ERROR_COMPUTER_DOES_NOT_SUPPORT_ENCRYPTION": "The computer cannot encrypt.",
    "MQ_ERROR_BAD_SECURITY_CONTEXT": "The security context is not valid.",
    "MQ_ERROR_COULD_NOT_GET_USER_SID": "The user's SID could not be read from the thread token.",
    "MQ_ERROR_COULD_NOT_GET_ACCOUNT_INFO": "The user's account information could not be read.",
    "MQ_ERROR_ILLEGAL_MQCOLUMNS": "The MQCOLUMNS parameter is not valid.",
    "MQ_ERROR_ILLEGAL_PROPID": "A property identifier is not valid.",
    "MQ_ERROR_ILLEGAL_RELATION": "A relation parameter is not valid.",
    "MQ_ERROR_ILLEGAL_PROPERTY_SIZE": "The message ID or correlation ID buffer has the wrong "
                                      "size.",
    "MQ_ERROR_ILLEGAL_RESTRICTION_PROPID": "A property identifier in MQRESTRICTION is not valid.",
    "MQ_ERROR_ILLEGAL_MQQUEUEPROPS": "MQQUEUEPROPS is null or holds no properties.",
    "MQ_ERROR_PROPERTY_NOTALLOWED": "The property is not allowed for this operation.",
    "MQ_ERROR_INSUFFICIENT_PROPERTIES": "Some properties the operation requires are missing.",
    "MQ_ERROR_MACHINE_EXISTS": "The MSMQ Configuration object already exists in Active "
                               "Directory.",
    "MQ_ERROR_ILLEGAL_MQQMPROPS": "MQQMPROPS is null or holds no properties.",
    "MQ_ERROR_DS_IS_FULL": "The directory service is full (MSMQ 1.0 and 2.0 only).",
    "MQ_ERROR_DS_ERROR": "Internal Active Directory error.",
    "MQ_ERROR_INVALID_OWNER": "The object owner is not valid.",
    "MQ_ERROR_UNSUPPORTED_ACCESS_MODE": "The requested access mode is not supported.",
    "MQ_ERROR_RESULT_BUFFER_TOO_SMALL": "The result buffer is too small.",
    "MQ_ERROR_DELETE_CN_IN_USE": "The connected network is in use and cannot be deleted "
                                 "(MSMQ 1.0 and 2.0 only).",
    "MQ_ERROR_NO_RESPONSE_FROM_OBJECT_SERVER": "The object owner did not respond.",
    "MQ_ERROR_OBJECT_SERVER_NOT_AVAILABLE": "The object owner is unavailable.",
    "MQ_ERROR_QUEUE_NOT_AVAILABLE": "Reading from a queue on a remote computer failed.",
    "MQ_ERROR_DTC_CONNECT": "No connection to the Distributed Transaction Coordinator could be "
                            "made.",
    "MQ_ERROR_TRANSACTION_IMPORT": "The transaction could not be imported.",
    "MQ_ERROR_TRANSACTION_USAGE": "The action cannot be performed inside a transaction.",
    "MQ_ERROR_TRANSACTION_SEQUENCE": "The transaction's operations are out of sequence.",
    "MQ_ERROR_MISSING_CONNECTOR_TYPE": "The connector type property is missing; acknowledgment "
                                       "and secure messages need it.",
    "MQ_ERROR_STALE_HANDLE": "The Message Queuing service restarted; open queue handles must be "
                             "closed.",
    "MQ_ERROR_TRANSACTION_ENLIST": "The transaction could not be enlisted.",
    "MQ_ERROR_QUEUE_DELETED": "The queue was deleted; this handle can no longer receive and must "
                              "be closed.",
    "MQ_ERROR_ILLEGAL_CONTEXT": "The context parameter is not valid.",
    "MQ_ERROR_ILLEGAL_SORT_PROPID": "A property identifier in MQSORTSET is not valid.",
    "MQ_ERROR_LABEL_TOO_LONG": "The message label is longer than MQ_MAX_MSG_LABEL_LEN.",
    "MQ_ERROR_LABEL_BUFFER_TOO_SMALL": "The label buffer is too small.",
    "MQ_ERROR_MQIS_SERVER_EMPTY": "The registry's list of MQIS servers is empty (MSMQ 1.0 and "
                                  "2.0 only).",
    "MQ_ERROR_MQIS_READONLY_MODE": "The MQIS database is read-only (MSMQ 1.0 and 2.0 only).",
    "MQ_ERROR_SYMM_KEY_BUFFER_TOO_SMALL": "The symmetric key buffer is too small.",
    "MQ_ERROR_SIGNATURE_BUFFER_TOO_SMALL": "The signature buffer is too small.",
    "MQ_ERROR_PROV_NAME_BUFFER_TOO_SMALL": "The provider name buffer is too small.",
    "MQ_ERROR_ILLEGAL_OPERATION": "The operation is not valid for a foreign queuing system.",
    "MQ_ERROR_WRITE_NOT_ALLOWED": "Database writes are refused while another MQIS server is "
                                  "being installed.",
    "MQ_ERROR_WKS_CANT_SERVE_CLIENT": "This MSMQ service cannot act as a supporting server; one "
                                      "is required.",
    "MQ_ERROR_DEPEND_WKS_LICENSE_OVERFLOW": "The supporting server has reached its limit of "
                                            "client connections.",
    "MQ_CORRUPTED_QUEUE_WAS_DELETED": "A corrupt queue file in the Lqs folder was deleted.",
    "MQ_ERROR_REMOTE_MACHINE_NOT_AVAILABLE": "The remote computer is unavailable.",
    "MQ_ERROR_UNSUPPORTED_OPERATION": "The operation is not supported in workgroup mode.",
    "MQ_ERROR_ENCRYPTION_PROVIDER_NOT_SUPPORTED": "The cryptographic service provider is not "
                                                  "supported.",
    "MQ_ERROR_CANNOT_SET_CRYPTO_SEC_DESCR": "The security descriptors of the cryptographic keys "
                                            "could not be set.",
    "MQ_ERROR_CERTIFICATE_NOT_PROVIDED": "An authenticated message was sent without a "
                                         "certificate.",
    "MQ_ERROR_Q_DNS_PROPERTY_NOT_SUPPORTED": "The PROPID_Q_PATHNAME_DNS column is not supported "
                                             "here.",
    "MQ_ERROR_CANNOT_CREATE_CERT_STORE": "The internal certificate store could not be created.",
    "MQ_ERROR_CANNOT_OPEN_CERT_STORE": "The internal certificate store could not be opened.",
    "MQ_ERROR_ILLEGAL_ENTERPRISE_OPERATION": "The operation is not valid for an MsmqServices "
                                             "object.",
    "MQ_ERROR_CANNOT_GRANT_ADD_GUID": "The Add GUID permission could not be granted to the "
                                      "current user.",
    "MQ_ERROR_CANNOT_LOAD_MSMQOCM": "Msmqocm.dll could not be loaded (MSMQ 1.0 and 2.0 only).",
    "MQ_ERROR_NO_ENTRY_POINT_MSMQOCM": "An entry point in Msmqocm.dll could not be found.",
    "MQ_ERROR_NO_MSMQ_SERVERS_ON_DC": "No Message Queuing servers were found on domain "
                                      "controllers.",
    "MQ_ERROR_CANNOT_JOIN_DOMAIN": "The computer joined the domain but stays in workgroup mode: "
                                   "registration in Active Directory failed.",
    "MQ_ERROR_CANNOT_CREATE_ON_GC": "The object was not created on the given Global Catalog "
                                    "server.",
    "MQ_ERROR_GUID_NOT_MATCHING": "No msmqConfiguration object matching the installation's GUID "
                                  "could be created (MSMQ 1.0 and 2.0 only).",
    "MQ_ERROR_PUBLIC_KEY_NOT_FOUND": "The computer's public key could not be found.",
    "MQ_ERROR_PUBLIC_KEY_DOES_NOT_EXIST": "The computer has no public key.",
    "MQ_ERROR_ILLEGAL_MQPRIVATEPROPS": "MQPRIVATEPROPS is null or holds no properties.",
    "MQ_ERROR_NO_GC_IN_DOMAIN": "No Global Catalog servers were found in the domain.",
    "MQ_ERROR_NO_MSMQ_SERVERS_ON_GC": "No Message Queuing servers were found on Global Catalog "
                                      "servers.",
    "MQ_ERROR_CANNOT_GET_DN": "The local computer's distinguished name could not be read (MSMQ "
                              "1.0 and 2.0 only).",
    "MQ_ERROR_CANNOT_HASH_DATA_EX": "The data of an authenticated message could not be hashed.",
    "MQ_ERROR_CANNOT_SIGN_DATA_EX": "The data of an authenticated message could not be signed.",
    "MQ_ERROR_CANNOT_CREATE_HASH_EX": "No hash object could be created for an authenticated "
                                      "message.",
    "MQ_ERROR_FAIL_VERIFY_SIGNATURE_EX": "The received message's signature is not valid.",
    "MQ_ERROR_CANNOT_DELETE_PSC_OBJECTS": "The object is owned by a PSC and cannot be deleted.",
    "MQ_ERROR_NO_MQUSER_OU": "The domain has no MSMQ Users organizational unit in Active "
                             "Directory.",
    "MQ_ERROR_CANNOT_LOAD_MQAD": "Mqad.dll could not be loaded.",
    "MQ_ERROR_CANNOT_LOAD_MQDSSRV": "Obsolete; no MSMQ version uses it.",
    "MQ_ERROR_PROPERTIES_CONFLICT": "Two or more of the properties passed are mutually "
                                    "exclusive.",
    "MQ_ERROR_MESSAGE_NOT_FOUND": "The message does not exist or has left the queue.",
    "MQ_ERROR_CANT_RESOLVE_SITES": "The computer's sites could not be resolved (check the "
                                   "subnet configuration in Active Directory).",
    "MQ_ERROR_NOT_SUPPORTED_BY_DEPENDENT_CLIENTS": "The operation is not supported when talking "
                                                   "to a supporting server.",
    "MQ_ERROR_OPERATION_NOT_SUPPORTED_BY_REMOTE_COMPUTER": "The remote Message Queuing service "
                                                           "does not support the operation.",
    "MQ_ERROR_NOT_A_CORRECT_OBJECT_CLASS": "The Active Directory object is not of the requested "
                                           "class.",
    "MQ_ERROR_MULTI_SORT_KEYS": "MQSORTSET may hold only one sort key.",
    "MQ_ERROR_GC_NEEDED": "An MSMQ Configuration object with the supplied GUID cannot be "
                          "created.",
    "MQ_ERROR_DS_BIND_ROOT_FOREST": "Binding to the forest root failed (often a DNS problem).",
    "MQ_ERROR_DS_LOCAL_USER": "A local (anonymous) user cannot access Active Directory.",
    "MQ_ERROR_Q_ADS_PROPERTY_NOT_SUPPORTED": "The PROPID_Q_ADS_PATH column is not supported "
                                             "here.",
    "MQ_ERROR_BAD_XML_FORMAT": "The property is not a well-formed XML document.",
    "MQ_ERROR_UNSUPPORTED_CLASS": "The Active Directory object is of an unsupported class.",
    "MQ_ERROR_UNINITIALIZED_OBJECT": "The MSMQManagement object was used before being "
                                     "initialized.",
    "MQ_ERROR_CANNOT_CREATE_PSC_OBJECTS": "The object would have to be owned by a PSC, so it "
                                          "cannot be created.",
    "MQ_ERROR_CANNOT_UPDATE_PSC_OBJECTS": "The object is owned by a PSC and cannot be updated.",
    "MQ_ERROR_RESOLVE_ADDRESS": "The given address could not be resolved (wrong address or DNS "
                                "failure).",
    "MQ_ERROR_TOO_MANY_PROPERTIES": "More than 128 properties were passed in one call.",
    "MQ_ERROR_MESSAGE_NOT_AUTHENTICATED": "The queue accepts only authenticated messages.",
    "MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION": "The message is held by a transaction whose "
                                                 "outcome is pending; no other transaction may "
                                                 "process it.",
    "MQDS_UNKNOWN_SOURCE": "The directory change names an unknown MSMQ Directory Service "
                           "server.",
    # NTSTATUS values
    "STATUS_SUCCESS": "The operation succeeded (NTSTATUS).",
    "STATUS_INVALID_HANDLE": "A handle is not valid (NTSTATUS).",
    "STATUS_INVALID_PARAMETER": "A parameter is not valid (NTSTATUS).",
    "STATUS_ACCESS_DENIED": "Access denied (NTSTATUS).",
    "STATUS_NOT_FOUND": "The object was not found (NTSTATUS).",
}

#: name -> one-line description, for every code above (read-only)
DESCRIPTIONS: Mapping[str, str] = MappingProxyType(_DESCRIPTIONS)


def _value_to_name() -> dict[int, str]:
    # The first name listed for a value wins, so MQ_OK (listed first) names 0, not STATUS_SUCCESS.
    names: dict[int, str] = {}
    for name in _DESCRIPTIONS:
        names.setdefault(globals()[name], name)
    return names


#: value -> name (read-only); 0 maps to "MQ_OK"
STATUS_NAMES: Mapping[int, str] = MappingProxyType(_value_to_name())


def name_of(code: int) -> str:
    """The name of ``code``, or ``"0x%08X"`` of it when it is not a known code."""
    name = STATUS_NAMES.get(code)
    return name if name is not None else f"0x{code:08X}"


def is_failure(code: int) -> bool:
    """True when the HRESULT severity bit (bit 31) is set: MQ_ERROR_*, STATUS_* errors."""
    return bool(code & _SEVERITY_FAILURE_BIT)


def is_mq_code(code: int) -> bool:
    """True when ``code`` carries FACILITY_MSMQ (0x0E); MQ_OK has facility 0, so it is not."""
    return (code >> 16) & 0x1FFF == _FACILITY_MSMQ
