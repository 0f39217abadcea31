Feature: MS-MQRR 3.1.4.13 R_StartTransactionalReceive (Opnum 13)
  The R_StartTransactionalReceive method reads a message from a transactional queue in a
  transaction: the message is locked under the transaction, the client ends the request with
  R_EndTransactionalReceive, and the transaction's commit removes the message (its abort gives
  it back). Peek actions are refused; with a NULL pTransactionId the call is R_StartReceive.
  ppPacketSections holds the message packet as R_StartReceive returns it.

  @MS-MQRR/3.1.4.13/R4 @MS-MQRR/3.1.4.13/R16 @MS-MQRR/3.1.4.13/R17 @MS-MQRR/3.1.4.13/R18
  @MS-MQRR/3.1.4.13/R19 @MS-MQRR/3.1.4.13/R20 @MS-MQRR/3.1.4.13/R21 @MS-MQRR/3.1.4.13/R22
  @MS-MQRR/3.1.4.13/R26 @MS-MQRR/3.1.4.13/R27 @MS-MQRR/3.1.4.13/R28 @MS-MQRR/3.1.4.13/R29
  @MS-MQRR/3.1.4.13/R43 @MS-MQRR/3.1.4.13/R44 @MS-MQRR/3.1.4.13/R47 @MS-MQRR/3.1.4.13/R65
  @MS-MQRR/3.1.4.13/R70 @MS-MQRR/3.1.4.13/R75 @MS-MQRR/3.1.4.13/R76 @MS-MQRR/3.1.4.13/R77
  @MS-MQRR/3.1.4.13/R78 @MS-MQRR/3.1.4.13/R79
  @MS-MQRR/3.1.4.13/R82 @MS-MQRR/3.1.4.13/R83 @MS-MQRR/3.1.4.13/R84 @MS-MQRR/3.1.4.13/R85
  @MS-MQRR/3.1.4.13/R87 @MS-MQRR/3.1.4.13/R88 @MS-MQRR/3.1.4.13/R89 @MS-MQRR/3.1.4.13/R111
  @MS-MQRR/3.1.4.13/R112 @MS-MQRR/3.1.4.13/R114
  Scenario: A message received in a transaction leaves the queue when the transaction commits
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client holds a receive handle on the queue
    When the client receives in transaction "T1" from the queue
    Then the call returns MQ_OK
    And the message "one" is returned
    And the message came back whole in one stFullPacket section
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.13/R14 @MS-MQRR/3.1.4.13/R15 @MS-MQRR/3.1.4.13/R113
  Scenario: pSequenceId and pdwArriveTime describe the message received
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client knows the lookup identifiers of the messages in the queue
    When the client receives in transaction "T1" from the queue
    Then the message "one" is returned
    And its pSequenceId is the lookup identifier of "one"
    And its pdwArriveTime is the arrival time a peek at "one" reported

  @MS-MQRR/3.1.4.13/R18 @MS-MQRR/3.1.4.13/R19 @MS-MQRR/3.1.4.13/R20 @MS-MQRR/3.1.4.13/R21
  @MS-MQRR/3.1.4.13/R22 @MS-MQRR/3.1.4.13/R30 @MS-MQRR/3.1.4.13/R31 @MS-MQRR/3.1.4.13/R32
  @MS-MQRR/3.1.4.13/R34 @MS-MQRR/3.1.4.13/R35 @MS-MQRR/3.1.4.13/R36 @MS-MQRR/3.1.4.13/R37
  @MS-MQRR/3.1.4.13/R38 @MS-MQRR/3.1.4.13/R39 @MS-MQRR/3.1.4.13/R41 @MS-MQRR/3.1.4.13/R42
  @MS-MQRR/3.1.4.13/R43
  Scenario: A body larger than dwMaxBodySize comes back cut, its trailers in a second section
    Given a transactional queue holding "hello world!"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue reading at most 5 body octets
    Then the call returns MQ_OK
    And the message "hello world!" came back cut after 5 body octets, its trailers if any in a second section

  @MS-MQRR/3.1.4.13/R13 @MS-MQRR/3.1.4.13/R20 @MS-MQRR/3.1.4.13/R21 @MS-MQRR/3.1.4.13/R26
  @MS-MQRR/3.1.4.13/R27
  Scenario: dwMaxCompoundMessageSize does not cut a binary message
    Given a transactional queue holding "hello world!"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue with dwMaxCompoundMessageSize 0
    Then the message "hello world!" is returned
    And the message came back whole in one stFullPacket section

  @MS-MQRR/3.1.4.13/R68
  Scenario: A queue that is not transactional is refused
    Given a queue holding "one"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue
    Then the call returns MQ_ERROR_TRANSACTION_USAGE
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R69
  Scenario Outline: Peek actions are refused in a transaction
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    When the client peeks in transaction "T1" with <ulAction>
    Then the call returns MQ_ERROR_TRANSACTION_USAGE
    And peeking the queue returns "one"

    Examples:
      | ulAction               |
      | MQ_ACTION_PEEK_CURRENT |
      | MQ_ACTION_PEEK_NEXT    |
      | MQ_LOOKUP_PEEK_CURRENT |
      | MQ_LOOKUP_PEEK_NEXT    |
      | MQ_LOOKUP_PEEK_PREV    |

  @MS-MQRR/3.1.4.13/R89 @MS-MQRR/3.1.4.13/R90 @MS-MQRR/3.1.4.13/R91 @MS-MQRR/3.1.4.13/R92
  @MS-MQRR/3.1.4.13/R93 @MS-MQRR/3.1.4.13/R94 @MS-MQRR/3.1.4.13/R95 @MS-MQRR/3.1.4.13/R96
  @MS-MQRR/3.1.4.13/R111 @MS-MQRR/3.1.4.13/R114
  Scenario: MQ_LOOKUP_RECEIVE_CURRENT receives the message of the lookup identifier
    Given a transactional queue holding "one, two, three"
    And the client has enlisted transaction "T1"
    And the client knows the lookup identifiers of the messages in the queue
    When the client receives in transaction "T1" with MQ_LOOKUP_RECEIVE_CURRENT at "two"
    Then the message "two" is returned
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is committed
    Then peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R97 @MS-MQRR/3.1.4.13/R98 @MS-MQRR/3.1.4.13/R99 @MS-MQRR/3.1.4.13/R100
  @MS-MQRR/3.1.4.13/R101 @MS-MQRR/3.1.4.13/R102 @MS-MQRR/3.1.4.13/R103 @MS-MQRR/3.1.4.13/R111
  @MS-MQRR/3.1.4.13/R114
  Scenario: MQ_LOOKUP_RECEIVE_NEXT receives the message after the lookup identifier
    Given a transactional queue holding "one, two, three"
    And the client has enlisted transaction "T1"
    And the client knows the lookup identifiers of the messages in the queue
    When the client receives in transaction "T1" with MQ_LOOKUP_RECEIVE_NEXT at "one"
    Then the message "two" is returned
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is committed
    Then peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R104 @MS-MQRR/3.1.4.13/R105 @MS-MQRR/3.1.4.13/R106 @MS-MQRR/3.1.4.13/R107
  @MS-MQRR/3.1.4.13/R108 @MS-MQRR/3.1.4.13/R109 @MS-MQRR/3.1.4.13/R110 @MS-MQRR/3.1.4.13/R111
  @MS-MQRR/3.1.4.13/R114
  Scenario: MQ_LOOKUP_RECEIVE_PREV receives the message before the lookup identifier
    Given a transactional queue holding "one, two, three"
    And the client has enlisted transaction "T1"
    And the client knows the lookup identifiers of the messages in the queue
    When the client receives in transaction "T1" with MQ_LOOKUP_RECEIVE_PREV at "three"
    Then the message "two" is returned
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is aborted
    Then peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R5 @MS-MQRR/3.1.4.13/R67 @MS-MQRR/3.1.4.13/R86
  Scenario: A receive in a transaction through a cursor
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client holds a cursor on the queue
    When the client receives in transaction "T1" from the queue through the cursor
    Then the message "one" is returned
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.13/R6 @MS-MQRR/3.1.4.13/R45 @MS-MQRR/3.1.4.13/R67
  Scenario: A closed cursor is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue through a closed cursor
    Then the call fails
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R4 @MS-MQRR/3.1.4.13/R45 @MS-MQRR/3.1.4.13/R65 @MS-MQRR/3.1.4.13/R66
  Scenario: A closed queue handle is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue through a closed handle
    Then the call fails
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R48
  Scenario Outline: Invalid parameter combinations are refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    When the client starts a transactional receive in transaction "T1" with <parameters>
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    And peeking the queue returns "one"

    Examples:
      | parameters                                |
      | a LookupId and a timeout                  |
      | a LookupId and MQ_ACTION_RECEIVE          |
      | a LookupId and a cursor                   |
      | MQ_LOOKUP_RECEIVE_CURRENT and no LookupId |
      | a cursor and MQ_LOOKUP_RECEIVE_NEXT       |
      | MQ_ACTION_PEEK_NEXT and no cursor         |
      | an unknown action                         |

  @MS-MQRR/3.1.4.13/R70 @MS-MQRR/3.1.4.13/R71 @MS-MQRR/3.1.4.13/R72 @MS-MQRR/3.1.4.13/R73
  @MS-MQRR/3.1.4.13/R74
  Scenario: A transaction the server does not know is created without an identifier
    Given a transactional queue holding "one, two"
    When the client receives in transaction "T9" from the queue
    Then the call returns MQ_OK
    And the message "one" is returned
    And peeking the queue returns "one"

  # The same by LookupId (MS-MQDMPR 3.1.7.1.13 R22-R24: only a transaction with an Identifier
  # locks the position): the message received stays in the queue, Available.
  @MS-MQRR/3.1.4.13/R70 @MS-MQRR/3.1.4.13/R71 @MS-MQRR/3.1.4.13/R72 @MS-MQDMPR/3.1.7.1.13/R23
  Scenario: A receive by LookupId in a transaction the server does not know leaves the message in the queue
    Given a transactional queue holding "one, two"
    When the client receives in transaction "T9" with MQ_LOOKUP_RECEIVE_CURRENT at "one"
    Then the call returns MQ_OK
    And peeking the queue returns "one"

  # The same, waiting (errata transactional-receive-unknown-transaction): the message that comes
  # goes to the receive in the unknown transaction, unlocked, and Message Position Available
  # stops there (that receive's DestructiveRead is True, MS-MQDMPR 3.1.7.2.2), so the receive
  # waiting after it is not given the same message and waits on to its ulTimeout.
  @MS-MQRR/3.1.4.13/R70 @MS-MQRR/3.1.4.13/R71 @MS-MQRR/3.1.4.13/R72
  @MS-MQDMPR/3.1.7.2.2/R10 @MS-MQDMPR/3.1.7.2.2/R11
  Scenario Outline: A message for a receive waiting in an unknown transaction is not given to the receive waiting after it as well
    Given a transactional queue holding ""
    And the client holds a cursor on the queue
    When the client starts a receive in transaction "T9" <how> with ulTimeout 60000 as request 1
    And the client starts a receive on a second handle on the queue with ulTimeout 2000 as request 2
    And a message "late" arrives in the queue
    Then the receive started on the queue returns the message "late"
    And the receive started on a second handle on the queue returns MQ_ERROR_IO_TIMEOUT

    Examples:
      | how                                 |
      | on the queue                        |
      | on the queue through its cursor     |

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4): the receive finds
  # nothing to receive from, an error the method returns as a failure HRESULT.
  @MS-MQRR/3.1.4.13/R45
  Scenario: A transactional receive through a handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client holds a receive handle on the queue
    When the queue is deleted through SUT control
    And the client receives in transaction "T1" from the queue
    Then the call returns a failure HRESULT

  @MS-MQRR/3.1.4.13/R49 @MS-MQRR/3.1.4.13/R50 @MS-MQRR/3.1.4.13/R51 @MS-MQRR/3.1.4.13/R52
  @MS-MQRR/3.1.4.13/R53 @MS-MQRR/3.1.4.13/R54 @MS-MQRR/3.1.4.13/R55 @MS-MQRR/3.1.4.13/R56
  @MS-MQRR/3.1.4.13/R57 @MS-MQRR/3.1.4.13/R58 @MS-MQRR/3.1.4.13/R59 @MS-MQRR/3.1.4.13/R60
  @MS-MQRR/3.1.4.13/R61 @MS-MQRR/3.1.4.13/R62 @MS-MQRR/3.1.4.13/R63 @MS-MQRR/3.1.4.13/R64
  Scenario: Without a transaction the call is R_StartReceive
    Given a queue holding "one, two"
    When the client calls R_StartTransactionalReceive without a transaction with MQ_ACTION_RECEIVE
    Then the call returns MQ_OK
    And the message "one" is returned
    When the client ends the receive with RR_ACK
    Then the call returns MQ_OK
    And peeking the queue returns "two"

  @MS-MQRR/3.1.4.13/R49 @MS-MQRR/3.1.4.13/R50 @MS-MQRR/3.1.4.13/R55 @MS-MQRR/3.1.4.13/R64
  Scenario: Without a transaction a peek is allowed
    Given a queue holding "one, two"
    When the client calls R_StartTransactionalReceive without a transaction with MQ_ACTION_PEEK_CURRENT
    Then the call returns MQ_OK
    And the message "one" is returned
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.13/R11 @MS-MQRR/3.1.4.13/R23 @MS-MQRR/3.1.4.13/R24 @MS-MQRR/3.1.4.13/R25
  @MS-MQRR/3.1.4.13/R30 @MS-MQRR/3.1.4.13/R31 @MS-MQRR/3.1.4.13/R33 @MS-MQRR/3.1.4.13/R34
  @MS-MQRR/3.1.4.13/R35 @MS-MQRR/3.1.4.13/R36 @MS-MQRR/3.1.4.13/R37 @MS-MQRR/3.1.4.13/R38
  @MS-MQRR/3.1.4.13/R40 @MS-MQRR/3.1.4.13/R41 @MS-MQRR/3.1.4.13/R42
  Scenario: An SRMP message received in a transaction is cut at dwMaxCompoundMessageSize, not dwMaxBodySize
    Given a transactional queue with an SRMP message of 64 body bytes
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has peeked the whole SRMP packet
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue reading at most 0 body octets with dwMaxCompoundMessageSize 52
    Then the SRMP packet comes back in a stSrmpFirstSection with the headers and 52 bytes of the CompoundMessageHeader, and a stSrmpSecondSection with the trailers

  @MS-MQRR/3.1.4.13/R43
  Scenario: The first section's TimeToReachQueue is the message's SentTime plus its TimeToReachQueue
    Given a transactional queue with a message sent at 1767225600 that may take 7200 seconds to reach its queue
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue reading at most 3 body octets
    Then the first section's BaseHeader.TimeToReachQueue is 1767225600 + 7200, the absolute expiry

  @MS-MQRR/3.1.4.13/R5 @MS-MQRR/3.1.4.13/R67 @MS-MQRR/3.1.4.13/R45 @MS-MQRR/3.1.4.4/R3 @MS-MQRR/3.1.4.5/R12
  Scenario: A cursor of another queue's handle is refused, or read on its own queue, never on the handle's
    Given a transactional queue holding "a"
    And another transactional queue holding "x"
    And the client has enlisted transaction "T1"
    And the client holds a cursor on the other queue
    And the client holds a cursor on the queue
    When the client receives in transaction "T1" with the cursor of the other queue through the handle of the queue
    Then the call is refused, or served at that cursor with "x"
    And peeking the queue returns "a"
    And where it was refused, peeking through the cursor of the other queue returns "x"

  @MS-MQRR/3.1.4.13/R90 @MS-MQRR/3.1.4.13/R97 @MS-MQRR/3.1.4.13/R104 @MS-MQRR/3.1.4.13/R111 @MS-MQDMPR/3.1.7.3.3/R4 @MS-MQDMPR/3.1.7.3.3/R5 @MS-MQDMPR/3.1.7.3.3/R6
  Scenario Outline: A receive in a transaction by the LookupId of another queue's message finds nothing in this queue
    Given a transactional queue holding "a, b"
    And another transactional queue holding "x"
    And the client has enlisted transaction "T1"
    And the client knows the lookup identifiers of the messages in the other queue
    When the client receives in transaction "T1" with <action> at "x"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking the queue returns "a"
    And peeking the other queue returns "x"

    Examples:
      | action                    |
      | MQ_LOOKUP_RECEIVE_CURRENT |
      | MQ_LOOKUP_RECEIVE_NEXT    |
      | MQ_LOOKUP_RECEIVE_PREV    |

  @MS-MQRR/3.1.4.13/R15 @MS-MQRR/3.1.4.13/R90 @MS-MQRR/3.1.4.13/R91 @MS-MQRR/3.1.4.13/R111 @MS-MQDMPR/3.1.7.1.9/R11 @MS-MQDMPR/3.1.7.1.9/R12 @MS-MQRR/3.1.4.14/R13 @MS-MQRR/3.1.4.14/R18
  Scenario: A transactional message received by its whole lookup identifier: pSequenceId is its lower 7 bytes
    Given a transactional queue holding transactional messages "t1, t2"
    And the client has found the whole lookup identifier of each message of the queue
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" with MQ_LOOKUP_RECEIVE_CURRENT at "t2"
    Then the message "t2" is returned
    And its pSequenceId is the lower 7 bytes of the lookup identifier of "t2"
    When the client ends the transactional receive with RR_ACK
    Then the call returns MQ_OK
    When the client sets the acknowledgement class of "t2" to 0xC004
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking the queue returns "t1"
