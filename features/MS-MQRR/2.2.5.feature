Feature: MS-MQRR 2.2.5 Message Packet Structure
  A message returned by R_StartReceive is a Message Packet: the UserMessage Packet of MS-MQMQ,
  the SessionHeader when BaseHeader.Flags.SH says so, then MS-MQRR's ExtensionHeader with the
  SubqueueHeader, DeadLetterHeader and ExtendedAddressHeader its flags announce. A message the
  suite sends is a Binary Message: no SOAP envelope, no SRMP headers.

  @MS-MQDMPR/3.1.1.12/R46 @MS-MQDMPR/3.1.1.12/R47
  Scenario: A message that names no hash algorithm carries SHA1's code
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.HashAlgorithm holds a hash algorithm's code, SHA1's for a message that names none

  # MS-MQDMPR 3.1.1.12: a message's CorrelationIdentifier is GUID_NULL and 0 unless the sending
  # application supplies one, and the server does not modify it (R32).
  @MS-MQDMPR/3.1.1.12/R32
  Scenario: A message that names no correlation identifier carries the default one
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.CorrelationID is the default OBJECTID, GUID_NULL and 0, for a message that names none

  # MS-MQDMPR 3.1.1.12: a message's Class is Normal unless the sender sets another.
  @MS-MQDMPR/3.1.1.12/R3
  Scenario: A message that names no class comes back as a normal message
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.MessageClass is MQMSG_CLASS_NORMAL (0x0000), for a message that names no class

  # MS-MQDMPR 3.1.1.12: a message's PrivacyLevel is None unless the sender sets another.
  @MS-MQDMPR/3.1.1.12/R4
  Scenario: A message that names no privacy level comes back with PrivacyLevel None
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.PrivacyLevel is MQMSG_PRIV_LEVEL_NONE (0x0), for a message that names no privacy level

  # MS-MQDMPR 3.1.1.12: a message's EncryptionAlgorithm SHOULD be RC4 unless the sender sets
  # another.
  @MS-MQDMPR/3.1.1.12/R48
  Scenario: A message that names no encryption algorithm carries RC4's code
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.EncryptionAlgorithm holds RC4's code (0x6801), for a message that names no encryption algorithm

  # MS-MQDMPR 3.1.1.12: a message's DeliveryGuarantee is Express unless the sender sets another.
  @MS-MQDMPR/3.1.1.12/R16 @MS-MQDMPR/3.1.1.12/R17
  Scenario: A message that names no delivery guarantee comes back as an express message
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.DM says express delivery (0x0), for a message that names no delivery guarantee

  # MS-MQDMPR 3.1.7.1.32: the packet carries the message's DeliveryGuarantee as it was sent.
  @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent recoverable comes back as a recoverable message
    Given a queue with a recoverable message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.DM says recoverable delivery (0x1), for a message sent recoverable

  # MS-MQDMPR 3.1.7.1.32: the source journaling the sender asked for travels in the packet.
  @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario Outline: A message's source journaling requests come back in UserHeader.Flags.JP and JN
    Given a queue with a message sent with positive journaling <jp> and negative journaling <jn>
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.JP is <jp> and UserHeader.Flags.JN is <jn>, as the message was sent

    Examples:
      | jp | jn |
      | 1  | 0  |
      | 0  | 1  |
      | 1  | 1  |

  # A message sent in a transaction of its own (SUT control's transactional messages are) is
  # the first and the last of it (MS-MQDMPR 3.1.4.3), which its TransactionHeader says.
  @MS-MQDMPR/3.1.7.1.30/R6 @MS-MQDMPR/3.1.4.3/R6 @MS-MQDMPR/3.1.4.3/R7 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent alone in a transaction carries a TransactionHeader marking it the first and the last of it
    Given a queue with a message sent alone in a transaction
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.TH is set and the TransactionHeader marks the message the first and the last of its transaction, with no connector queue manager

  # MS-MQDMPR 3.1.7.1.32's table: TransactionHeader.Flags.FA is Message.FinalAckRequired,
  # ConnectorQMGuid its ConnectorQueueManagerIdentifier, announced by Flags.CG (MS-MQMQ 2.2.20.5).
  @MS-MQDMPR/3.1.7.1.30/R6 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A transactional message that asks for a final acknowledgement, through a connector queue manager, carries both in its TransactionHeader
    Given a queue with a transactional message that asks for a final acknowledgement through the connector queue manager "6b0e4c55-7d43-4f0e-9a55-32f8c1c6b2a1"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the TransactionHeader has Flags.FA set, Flags.CG set and the connector queue manager as ConnectorQMGuid

  # MS-MQDMPR 3.1.1.12: ConnectorTypeIdentifier says a connector application sent the message;
  # the server carries it without interpreting it.
  @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message a connector application sent comes back with its connector type
    Given a queue with a message sent by a connector application of type "0f3e6c2a-4b1d-4e8f-9a7c-5d2b8e1f4a6c"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.CQ is set and UserHeader.ConnectorType is the type the message was sent with

  # MS-MQDMPR 3.1.1.12: the acknowledgements a sender requests travel in the
  # MessagePropertiesHeader's flags (MS-MQMQ 2.2.19.3).
  @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario Outline: A message's requested acknowledgements come back in MessagePropertiesHeader.Flags
    Given a queue with a message that requests the acknowledgements "<requested>"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then MessagePropertiesHeader.Flags has exactly <bits>

    Examples:
      | requested                   | bits      |
      | AckPosArrival               | PA        |
      | AckPosReceive               | PR        |
      | AckNegArrival               | NA        |
      | AckNegReceive               | NR        |
      | AckPosArrival,AckNegReceive | PA and NR |

  # MS-MQDMPR 3.1.1.12: a message's label, up to the 249 characters LabelLength's 0xFA holds
  # with the terminating null (MS-MQMQ 2.2.19.3), travels in the MessagePropertiesHeader.
  @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario Outline: A message's label comes back in its MessagePropertiesHeader
    Given a queue with a message whose label is <length> characters long
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the MessagePropertiesHeader carries the label, its LabelLength counting the null

    Examples:
      | length |
      | 0      |
      | 9      |
      | 249    |

  # MS-MQDMPR 3.1.1.12: Extension, a second payload, travels in the MessagePropertiesHeader.
  @MS-MQDMPR/3.1.7.1.32/R3 @MS-MQDMPR/3.1.7.1.32/R8
  Scenario Outline: A message's extension data comes back in its MessagePropertiesHeader
    Given a queue with a message with <size> bytes of extension data
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the MessagePropertiesHeader carries the extension data, ExtensionSize its size in bytes

    Examples:
      | size |
      | 5    |
      | 4096 |

  # MS-MQDMPR 3.1.7.1.30: an authenticated message has a SecurityHeader, with the sender's
  # identity and the signature it was sent with.
  # It was signed by the queuing system (DE set) and is not private (EB clear).
  @MS-MQDMPR/3.1.7.1.30/R7 @MS-MQDMPR/3.1.7.1.32/R3 @MS-MQDMPR/3.1.7.1.32/R9 @MS-MQDMPR/3.1.7.1.32/R10
  @MS-MQDMPR/3.1.7.1.32/R12 @MS-MQDMPR/3.1.7.1.32/R15
  Scenario Outline: A signed message comes back with its SecurityHeader
    Given a queue with a message signed at <level> by a sender with a SID
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.SH is set and the SecurityHeader carries the sender's SID and the signature, with AU and AS zero
    And SecurityHeader.Flags.EB is clear and SecurityHeader.Flags.DE is set

    Examples:
      | level |
      | Sig10 |
      | Sig20 |

  # MS-MQDMPR 3.1.7.1.32: a private message carries its PrivacyLevel, EncryptionAlgorithm and
  # HashAlgorithm in its MessagePropertiesHeader (coded as MS-MQMQ 2.2.19.3 lists them), its
  # SymmetricKey as the SecurityHeader's EncryptionKey, and EB set.
  @MS-MQDMPR/3.1.7.1.32/R3 @MS-MQDMPR/3.1.7.1.32/R11
  Scenario Outline: A private message comes back with its privacy level, algorithms and symmetric key
    Given a queue with a message signed at Sig20, sent at <privacy> privacy, encrypted with <encryption> and hashed with <hash>
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the MessagePropertiesHeader carries the privacy level and the algorithms, the SecurityHeader the symmetric key with Flags.EB set

    Examples:
      | privacy  | encryption | hash    |
      | Base     | RC4        | MD5     |
      | Enhanced | AES128     | SHA_256 |
      | Advanced | AES256     | SHA_512 |
      | Advanced | RC2        | MD2     |
      | Enhanced | AES192     | MD4     |
      | Base     | RC4        | SHA1    |
      | Base     | RC2        | SHA     |

  # MS-MQDMPR 3.1.7.1.32: a message signed by an alternative security provider has DE clear
  # and a ProviderInfo naming it (ProviderInfoSize: the name's size plus 4), and a sender
  # certificate comes back whole (SenderCertSize: its size). ST is the SenderIdentifierType:
  # 0x0 without the sender's identity, 0x1 with its SID, 0x2 for a queue manager that sent it,
  # with its GUID as the SecurityID. The signature's and the certificate's
  # sizes need padding (MS-MQMQ 2.2.20.6: each item aligned to 4 bytes), and so does one
  # ProviderInfo (an eight-character name: 4 + 18 bytes).
  @MS-MQDMPR/3.1.7.1.32/R3 @MS-MQDMPR/3.1.7.1.32/R13 @MS-MQDMPR/3.1.7.1.32/R14 @MS-MQDMPR/3.1.7.1.32/R16
  Scenario Outline: A message signed by an alternative provider comes back with its ProviderInfo and sender certificate
    Given a queue with a message of <sender> signed at Sig30 by the provider "<provider>" of type <type> with a <size>-byte sender certificate
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then SecurityHeader.Flags.DE is clear and the SecurityHeader carries the ProviderInfo and the sender certificate

    Examples:
      | sender          | provider                | type | size |
      | no identity     | Contoso CSP             | 24   | 7    |
      | no identity     | Fabrikam Signature Prov | 1    | 1200 |
      | a sender's SID  | Contoso CSP             | 24   | 7    |
      | a queue manager | Tailspin                | 24   | 7    |

  # MS-MQDMPR 3.1.7.1.30: a message sent to several queues at once lists them all in its
  # MultiQueueFormatHeader (MS-MQMQ 2.2.20.1).
  @MS-MQDMPR/3.1.7.1.30/R10 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent to several queues at once comes back with a MultiQueueFormatHeader listing them
    Given a queue with a message sent at once to the queues "DIRECT=TCP:192.0.2.44\private$\a,PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1,PRIVATE=1c9d0b6e-5a7f-4b8e-8f3a-0d2e4c6a8b10\00000001"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.MQ is set and the MultiQueueFormatHeader lists every queue the message was sent to

  # MS-MQDMPR 3.1.7.1.30's table: AdministrationMultiQueueFormatName, ResponseMultiQueueFormatName
  # and MultipleDestinationSignature are the MultiQueueFormatHeader's Administration, Response
  # and Signature; an element may be a distribution list (DL=, MS-MQMQ 2.2.18.1.4). Each list
  # ends with a direct name whose end needs padding (MS-MQMQ 2.2.20.2:
  # "rounded up to the next 4-byte boundary"), the signature is of an odd size (2.2.20.3).
  @MS-MQDMPR/3.1.7.1.30/R10 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent to several queues at once comes back with its administration and response queues and its signature
    Given a queue with a message sent at once to the queues "PRIVATE=1c9d0b6e-5a7f-4b8e-8f3a-0d2e4c6a8b10\00000002,DIRECT=OS:host\q" with the administration queues "PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1,DL=2d9e1c7f-6b8a-4c9d-9e4b-1f3e5d7b9c21,DIRECT=OS:ad\min" and the response queues "DIRECT=TCP:192.0.2.9\private$\r" and a 13-byte signature
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the MultiQueueFormatHeader lists the destination, administration and response queues and carries the signature

  # MS-MQDMPR 3.1.7.1.32: the packet names the queue a message was sent to, and its kind.
  @MS-MQDMPR/3.1.1.12/R49 @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent to the queue's PRIVATE= format name carries it, with DQ 0x3
    Given a queue with a message sent to the queue's PRIVATE= format name
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.DQ says a private queue on the destination queue manager (0x3), and the UserHeader names the queue by the PRIVATE= format name it was sent to

  @MS-MQDMPR/3.1.1.12/R49 @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message sent to a public queue's PUBLIC= format name carries it, with DQ 0x5
    Given a public queue with a message sent to the queue's PUBLIC= format name
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.DQ says a public queue (0x5), and the UserHeader names the queue by the PUBLIC= format name it was sent to

  # MS-MQDMPR 3.1.7.1.32: the administration and response queues a sender names travel in the
  # UserHeader with the code MS-MQMQ 2.2.19.2 gives their kind of format name.
  @MS-MQDMPR/3.1.1.12/R50 @MS-MQDMPR/3.1.1.12/R51 @MS-MQDMPR/3.1.7.1.32/R2 @MS-MQDMPR/3.1.7.1.32/R3
  Scenario Outline: A message's administration and response queues come back in its UserHeader with their types
    Given a queue with a message whose administration queue is "<admin>" and response queue is "<response>"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.AQ is <aq> and UserHeader.Flags.RQ is <rq>, and the UserHeader names both queues as the message gave them

    Examples:
      | admin                                                 | response                                              | aq  | rq  |
      | DIRECT=OS:client7\private$\acks                       | PRIVATE=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1\0000002a | 0x7 | 0x6 |
      | PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1           | DIRECT=TCP:192.0.2.44\private$\replies                | 0x5 | 0x7 |
      | PRIVATE=1c9d0b6e-5a7f-4b8e-8f3a-0d2e4c6a8b10\00000001 | PUBLIC=8e0a4c55-7d43-4f0e-9a55-32f8c1c6b2a1           | 0x6 | 0x5 |

  # MS-MQMQ 2.2.19.2: AQ 0x0 and RQ 0x0 say there is no such queue.
  @MS-MQDMPR/3.1.7.1.32/R3
  Scenario: A message that names no administration or response queue has AQ and RQ 0x0
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then UserHeader.Flags.AQ and RQ are 0x0, for a message that names no administration or response queue

  @MS-MQRR/2.2.5.1/R6 @MS-MQRR/2.2.5.1.1/R1 @MS-MQRR/2.2.5.1.2.1/R1 @MS-MQRR/2.2.5.1.2.2/R1
  Scenario: A message the suite sent is a Binary Message with no SRMP headers
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the packet is a Binary Message: UserHeader.Flags.AH is clear and no SRMP header is present

  @MS-MQRR/2.2.5.1/R7 @MS-MQRR/2.2.5.2/R1 @MS-MQRR/2.2.5.2/R3 @MS-MQRR/2.2.5.2/R4 @MS-MQRR/2.2.5.2/R9
  Scenario: The ExtensionHeader follows the packet and counts the headers after it
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE
    Then the SessionHeader is present exactly when BaseHeader.Flags.SH is set
    And the ExtensionHeader counts the headers that follow it, sets SQ and EA, and DL is 0

  @MS-MQRR/2.2.5.3/R2 @MS-MQRR/2.2.5.3/R3 @MS-MQRR/2.2.5.3/R7 @MS-MQRR/2.2.5.3/R10
  Scenario: A message in no subqueue has empty subqueue names
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the SubqueueHeader names no subqueue and no target subqueue, and TM is clear

  @MS-MQRR/2.2.5.3/R2 @MS-MQRR/2.2.5.3/R5 @MS-MQRR/2.2.5.3/R6 @MS-MQRR/2.2.5.3/R10
  Scenario: A message moved to a subqueue carries the subqueue's name
    Given a queue holding "one" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client peeks at subqueue "retry"
    Then the SubqueueHeader names subqueue "retry", padded with zero bytes

  # The SubqueueName field holds 31 WCHARs and the null (64 bytes): a name of 31 characters
  # fills it whole.
  @MS-MQRR/2.2.5.3/R5 @MS-MQRR/2.2.5.3/R6
  Scenario: A message moved to a subqueue of a 31-character name carries the whole name
    Given a queue holding "one" with subqueues "abcdefghijklmnopqrstuvwxyz01234"
    And the client has moved "one" from the queue to subqueue "abcdefghijklmnopqrstuvwxyz01234"
    When the client peeks at subqueue "abcdefghijklmnopqrstuvwxyz01234"
    Then the SubqueueHeader names subqueue "abcdefghijklmnopqrstuvwxyz01234", padded with zero bytes

  # In a subqueue the SubqueueHeader counts (R1: one naming no subqueue is ignored): its
  # AcknowledgementClass is the message's class.
  @MS-MQRR/2.2.5.3/R3
  Scenario: A message moved to a subqueue carries its class in the SubqueueHeader
    Given a queue holding "one" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client peeks at subqueue "retry"
    Then SubqueueHeader.AcknowledgementClass is the class the MessagePropertiesHeader gives

  # The SoapHeader (MS-MQMQ 2.2.20.7) follows the body, in the trailers before the
  # ExtensionHeader: writing the SubqueueName where the trailers begin would overwrite it.
  @MS-MQRR/3.1.4.7/R28 @MS-MQRR/3.1.4.7/R31
  Scenario: A message with a SOAP header comes back with its SoapHeader as it was sent
    Given a queue holding "one", each message with the SOAP header "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" and the SOAP body "<b/>",
    When the client peeks at the queue
    Then the packet's SoapHeader holds the SOAP header and the SOAP body the message was sent with

  # An empty section is still a section: its DataLength says how much follows (nothing), and
  # what comes after it (the ExtensionHeader) is found where that length puts it.
  @MS-MQRR/3.1.4.7/R28 @MS-MQRR/3.1.4.7/R31
  Scenario: A message with a SOAP header and an empty SOAP body comes back with its SoapHeader as it was sent
    Given a queue holding "one", each message with the SOAP header "<h/>" and the SOAP body "",
    When the client peeks at the queue
    Then the packet's SoapHeader holds the SOAP header and the SOAP body the message was sent with

  @MS-MQRR/2.2.5.3/R5 @MS-MQRR/2.2.5.3/R6 @MS-MQRR/3.1.4.7/R31
  Scenario: A message with a SOAP header moved to a subqueue keeps its SoapHeader and carries the subqueue's name
    Given a queue holding "one", each message with the SOAP header "<h:a xmlns:h='urn:x'/>" and the SOAP body "bbbb", with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client peeks at subqueue "retry"
    Then the packet's SoapHeader holds the SOAP header and the SOAP body the message was sent with
    And the SubqueueHeader names subqueue "retry", padded with zero bytes

  @MS-MQRR/2.2.5.5/R2 @MS-MQRR/2.2.5.5/R3 @MS-MQRR/2.2.5.5/R5
  Scenario: The ExtendedAddressHeader has a known AddressType with a matching length and scope
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the ExtendedAddressHeader has a known AddressType, its AddressLength and AddressScope

  @MS-MQRR/2.2.5.2/R2 @MS-MQRR/2.2.5.4/R1 @MS-MQRR/2.2.5.4/R2 @MS-MQRR/2.2.5.4/R3
  Scenario Outline: A message with an application dead-letter queue carries a DeadLetterHeader
    Given a queue with a message whose dead-letter queue is "<path>"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the ExtensionHeader counts the headers that follow it, sets SQ and EA, and DL is 1
    And the DeadLetterHeader holds "<path>", null-terminated and padded to 4 bytes

    Examples:
      | path                  |
      | MQREF\private$\dead1  |
      | MQREF\private$\dlq1   |

  @MS-MQRR/2.2.5.2/R2 @MS-MQRR/2.2.5.2/R7 @MS-MQRR/2.2.5.4/R1 @MS-MQRR/2.2.5.4/R2
  Scenario: A dead-letter queue that exists is valid: DI is 0
    Given a queue with a message whose dead-letter queue is another queue that exists
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the DeadLetterHeader names that queue, and ExtensionHeader.Flags.DI is 0: the queue is valid

  @MS-MQRR/2.2.5.1/R6 @MS-MQRR/2.2.5.1.2/R1 @MS-MQRR/2.2.5.1.2.1/R1 @MS-MQRR/2.2.5.1.2.1/R3
  @MS-MQRR/2.2.5.1.2.2/R1 @MS-MQRR/2.2.5.1.2.2/R3 @MS-MQRR/2.2.5.1.2.2/R4
  @MS-MQRR/2.2.5.1.2.2/R5
  Scenario: A message that came over HTTP is an SRMP Message with its envelope and compound message
    Given a queue with an SRMP message of 24 body bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the packet is an SRMP Message: UserHeader.Flags.AH is set, and the SRMPEnvelopeHeader and CompoundMessageHeader describe the envelope, the HTTP body and the message body in it

  # The message body may end the HTTP body: MsgBodyOffset + MsgBodySize is then HTTPBodySize.
  @MS-MQRR/2.2.5.1.2/R1 @MS-MQRR/2.2.5.1.2.2/R3 @MS-MQRR/2.2.5.1.2.2/R4 @MS-MQRR/2.2.5.1.2.2/R5
  Scenario: An SRMP message whose body ends its HTTP body has a CompoundMessageHeader placing it there
    Given a queue with an SRMP message of 24 body bytes that end its HTTP body
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the packet is an SRMP Message: UserHeader.Flags.AH is set, and the SRMPEnvelopeHeader and CompoundMessageHeader describe the envelope, the HTTP body and the message body in it

  # An SRMP message with an empty body: its HTTP body holds no message body, so MsgBodySize is 0.
  @MS-MQRR/2.2.5.1.2/R1 @MS-MQRR/2.2.5.1.2.2/R3 @MS-MQRR/2.2.5.1.2.2/R4
  Scenario: An SRMP message with an empty body has a CompoundMessageHeader whose MsgBodySize is 0
    Given a queue with an SRMP message of 0 body bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the packet is an SRMP Message: UserHeader.Flags.AH is set, and the SRMPEnvelopeHeader and CompoundMessageHeader describe the envelope, the HTTP body and the message body in it

  @MS-MQRR/2.2.5.1/R1 @MS-MQRR/2.2.5.1/R2 @MS-MQRR/2.2.5.1/R3 @MS-MQRR/2.2.5.1/R4
  @MS-MQRR/2.2.5.1/R5 @MS-MQRR/2.2.5.5/R2 @MS-MQRR/2.2.5.5/R3 @MS-MQRR/2.2.5.5/R5
  @MS-MQRR/2.2.5.5/R6 @MS-MQRR/2.2.5.5/R7 @MS-MQRR/2.2.5.5/R8
  Scenario Outline: A message received from a host names it in the UserHeader and the ExtendedAddressHeader
    Given a queue with a message received from host "<host>" sent to a direct format name
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the UserHeader holds the host's address where a direct destination has it
    And the ExtendedAddressHeader holds the host's address, its type, length and scope

    Examples:
      | host                       |
      | 192.0.2.7                  |
      | 2001:db8::17               |
      | fe80::1:2:3:4%5            |

  @MS-MQRR/2.2.5.5/R2 @MS-MQRR/2.2.5.5/R3 @MS-MQRR/2.2.5.5/R5 @MS-MQRR/2.2.5.5/R6
  @MS-MQRR/2.2.5.5/R7
  Scenario: A message received from a host through a queue name that is not direct has the address in the ExtendedAddressHeader
    Given a queue with a message received from host "198.51.100.20"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE
    Then the ExtendedAddressHeader holds the host's address, its type, length and scope
