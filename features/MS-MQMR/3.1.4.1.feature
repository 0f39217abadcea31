Feature: MS-MQMR 3.1.4.1 R_QMMgmtGetInfo (Opnum 0)
  The R_QMMgmtGetInfo method requests information on an MSMQ installation on a server or on a
  specific queue. Every value returned is compared, type and value, with what the model
  computes from the same state by the tables of this section (the oracle); the path names
  listed by the machine are compared for the queues the scenario made.

  # ------------------------------------------------------------------ the machine

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R11 @MS-MQMR/3.1.4.1/R12 @MS-MQMR/3.1.4.1/R17
  @MS-MQMR/3.1.4.1/R18 @MS-MQMR/3.1.4.1/R19 @MS-MQMR/3.1.4.1/R4 @MS-MQMR/3.1.4.1/R7
  Scenario: Every machine property is returned with the type and value of its row
    Given the client has noted the connection state of the queue manager
    And a private queue "A" with messages "one, two"
    When the client asks the machine for all 6 machine properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine property PROPID_MGMT_MSMQ_TYPE is a string

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R12 @MS-MQMR/3.1.4.1/R18 @MS-MQMR/3.1.4.1/R4
  Scenario Outline: One machine property asked alone is returned in apVar[0]
    Given the client has noted the connection state of the queue manager
    When the client asks the machine for <property>
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

    Examples:
      | property                             |
      | PROPID_MGMT_MSMQ_ACTIVEQUEUES        |
      | PROPID_MGMT_MSMQ_PRIVATEQ            |
      | PROPID_MGMT_MSMQ_DSSERVER            |
      | PROPID_MGMT_MSMQ_CONNECTED           |
      | PROPID_MGMT_MSMQ_TYPE                |
      | PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES |

  @MS-MQMR/3.1.4.1/R4 @MS-MQMR/3.1.4.1/R18
  Scenario: Properties asked in any order come back in the order asked
    Given the client has noted the connection state of the queue manager
    When the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED, PROPID_MGMT_MSMQ_PRIVATEQ, PROPID_MGMT_MSMQ_CONNECTED, PROPID_MGMT_MSMQ_DSSERVER
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_PRIVATEQ lists the path name of every private queue
    Given a private queue "A" with no message
    And a transactional queue "T" with messages "x"
    When the client asks the machine for PROPID_MGMT_MSMQ_PRIVATEQ
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine lists queue "A" in PROPID_MGMT_MSMQ_PRIVATEQ
    And the machine lists queue "T" in PROPID_MGMT_MSMQ_PRIVATEQ

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_ACTIVEQUEUES lists a queue while a client has it open
    Given a private queue "A" with messages "one"
    And a private queue "B" with messages "one"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client asks the machine for PROPID_MGMT_MSMQ_ACTIVEQUEUES
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine lists queue "A" in PROPID_MGMT_MSMQ_ACTIVEQUEUES
    And the machine does not list queue "B" in PROPID_MGMT_MSMQ_ACTIVEQUEUES

  @MS-MQMR/3.1.4.1/R18
  Scenario: A queue leaves PROPID_MGMT_MSMQ_ACTIVEQUEUES when its last handle is closed
    Given a private queue "A" with messages "one"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client closes its handle to queue "A"
    And the client asks the machine for PROPID_MGMT_MSMQ_ACTIVEQUEUES
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine does not list queue "A" in PROPID_MGMT_MSMQ_ACTIVEQUEUES

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES is the sum of the queues' TotalBytes
    Given the client has read PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES
    And a private queue "A" with messages "one, two, three"
    When the client asks the machine for PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And PROPID_MGMT_MSMQ_BYTES_IN_ALL_QUEUES grew by PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "A"

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_CONNECTED follows QueueManager.ConnectionActive
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "DISCONNECT" on the machine
    Then the machine property PROPID_MGMT_MSMQ_CONNECTED is "DISCONNECTED"
    When the client calls R_QMMgmtAction "CONNECT" on the machine
    Then the machine property PROPID_MGMT_MSMQ_CONNECTED is "CONNECTED"

  # ------------------------------------------------------------------ a queue

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R13 @MS-MQMR/3.1.4.1/R17 @MS-MQMR/3.1.4.1/R20
  @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R23 @MS-MQMR/3.1.4.1/R24
  @MS-MQMR/3.1.4.1/R25 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R28 @MS-MQMR/3.1.4.1/R29
  @MS-MQMR/3.1.4.1/R30 @MS-MQMR/3.1.4.1/R33 @MS-MQMR/3.1.4.1/R35 @MS-MQMR/3.1.4.1/R37
  @MS-MQMR/3.1.4.1/R38 @MS-MQMR/3.1.4.1/R39 @MS-MQMR/3.1.4.1/R40 @MS-MQMR/3.1.4.1/R41
  @MS-MQMR/3.1.4.1/R4 @MS-MQMR/3.1.4.1/R7
  Scenario: Every queue property of a local private queue is returned with the type and value of its row
    Given a private queue "A" with messages "one, two"
    When the client asks queue "A" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "A" has PROPID_MGMT_QUEUE_TYPE "PRIVATE"
    And queue "A" has PROPID_MGMT_QUEUE_LOCATION "LOCAL"
    And queue "A" has PROPID_MGMT_QUEUE_XACT "NO"
    And queue "A" has PROPID_MGMT_QUEUE_FOREIGN "NO"
    And queue "A" has PROPID_MGMT_QUEUE_STATE "LOCAL CONNECTION"
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 2

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R34
  Scenario: A transactional queue is reported with PROPID_MGMT_QUEUE_XACT "YES"
    Given a transactional queue "T" with messages "x"
    When the client asks queue "T" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "T" has PROPID_MGMT_QUEUE_XACT "YES"

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R31
  Scenario: A system queue is reported with PROPID_MGMT_QUEUE_TYPE "MACHINE"
    Given the system journal queue "J"
    When the client asks queue "J" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "J" has PROPID_MGMT_QUEUE_TYPE "MACHINE"

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario: PROPID_MGMT_QUEUE_SUBQUEUE_COUNT and _NAMES describe the SubqueueCollection
    Given a queue "S" with subqueues "poison, retry" and messages "one"
    When the client asks queue "S" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "S" has PROPID_MGMT_QUEUE_SUBQUEUE_COUNT 2

  @MS-MQMR/3.1.4.1/R40
  Scenario: PROPID_MGMT_QUEUE_MESSAGE_COUNT counts a received message until it is deleted
    Given a private queue "A" with messages "one, two"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "A"
    Then queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 2
    When the client acknowledges the receive
    Then queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1

  # MS-MQDMPR 3.1.1.2 defines TotalBytes as the bytes of the messages in the queue; read
  # literally, Message Position Available (3.1.7.2.2) adds a message's size again each time a
  # NACK gives it back (errata total-bytes): the count must stay the sum of what is there
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.2.2/R3
  Scenario: PROPID_MGMT_QUEUE_BYTES_IN_QUEUE stays the same when a receive is given back with RR_NACK
    Given a private queue "A" with messages "one, two"
    And the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "A"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "A"
    And the client gives the receive back with RR_NACK
    And the client starts a two-phase receive from queue "A"
    And the client gives the receive back with RR_NACK
    Then PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "A" is what it was
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 2

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario: PROPID_MGMT_QUEUE_BYTES_IN_QUEUE drops to 0 when the queue is purged
    Given a private queue "A" with messages "one, two"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client purges queue "A"
    Then queue "A" has PROPID_MGMT_QUEUE_BYTES_IN_QUEUE 0
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0

  # ------------------------------------------------------------------ the queue journal

  # MS-MQDMPR 3.1.1.2: a queue whose Journaling is True has a queue journal
  # (JournalQueueReference) that holds a copy of each message consumed from the queue; no event
  # says when a copy enters it (errata queue-journal). A message is consumed when a receive of
  # it is acknowledged (Dequeue Message End deletes it, 3.1.7.1.12); a peek or an RR_NACK
  # leaves it in the queue.
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.3/R8 @MS-MQDMPR/3.1.7.1.12/R12
  @MS-MQDMPR/3.1.7.1.12/R16 @MS-MQDMPR/3.1.7.2.1/R5
  Scenario: A message received and acknowledged from a journaled queue is counted in its queue journal
    Given a journaled private queue "J" with messages "one, two, three"
    And the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of queue "J"
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    And the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 2
    And queue "J" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1
    And PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL of queue "J" is what PROPID_MGMT_QUEUE_BYTES_IN_QUEUE lost

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.11/R13
  @MS-MQDMPR/3.1.7.1.12/R12
  Scenario: A journaled queue's journal counts a received message once the receive is acknowledged
    Given a journaled private queue "J" with messages "one, two"
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "J"
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    When the client acknowledges the receive
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 1

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.15/R58
  Scenario: A peek at a journaled queue leaves its queue journal empty
    Given a journaled private queue "J" with messages "one, two"
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client peeks at queue "J"
    And the client peeks at queue "J"
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    And queue "J" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 0
    And queue "J" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 2

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.12/R17
  @MS-MQDMPR/3.1.7.1.12/R18
  Scenario: A receive given back with RR_NACK leaves a journaled queue's journal empty
    Given a journaled private queue "J" with messages "one"
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "J"
    And the client gives the receive back with RR_NACK
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    And queue "J" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 0
    And queue "J" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.12/R12
  Scenario: A queue without journaling keeps its queue journal empty when messages are received from it
    Given a private queue "A" with messages "one, two"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "A"
    And the client acknowledges the receive
    Then queue "A" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    And queue "A" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 0
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1

  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R28
  @MS-MQMR/3.1.4.1/R41 @MS-MQMR/3.1.4.1/R42 @MS-MQMR/3.1.4.1/R43 @MS-MQMR/3.1.4.1/R44
  Scenario: Every queue property of an outgoing queue is returned with the type and value of its row
    Given an outgoing queue "O" to a remote queue
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_LOCATION "REMOTE"
    And queue "O" has PROPID_MGMT_QUEUE_STATE "INACTIVE"

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R41 @MS-MQMR/3.1.4.1/R42
  @MS-MQMR/3.1.4.1/R43 @MS-MQMR/3.1.4.1/R44 @MS-MQMR/3.1.4.1/R45 @MS-MQMR/3.1.4.1/R46
  @MS-MQMR/3.1.4.1/R47
  Scenario Outline: PROPID_MGMT_QUEUE_STATE of an outgoing queue names its State
    Given an outgoing queue "O" to a remote queue in state <state>
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_STATE "<value>"

    Examples:
      | state          | value           |
      | Connected      | CONNECTED       |
      | Disconnected   | DISCONNECTED    |
      | Disconnecting  | DISCONNECTING   |
      | Inactive       | INACTIVE        |
      | Locked         | LOCKED          |
      | NeedValidation | NEED VALIDATION |
      | Waiting        | WAITING         |
      | OnHold         | ONHOLD          |

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R31 @MS-MQMR/3.1.4.1/R32
  Scenario: A connector queue is reported with PROPID_MGMT_QUEUE_TYPE "CONNECTOR"
    Given a connector queue "C"
    When the client asks queue "C" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "C" has PROPID_MGMT_QUEUE_TYPE "CONNECTOR"

  # ------------------------------------------------------------------ the queue manager's configuration

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R35 @MS-MQMR/3.1.4.1/R36
  Scenario: While the directory is offline a private queue is not foreign
    Given a private queue "A" with messages "one"
    And the queue manager is configured with directory_integrated true, directory_offline true
    When the client asks queue "A" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "A" has PROPID_MGMT_QUEUE_FOREIGN "NO"

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R35 @MS-MQMR/3.1.4.1/R36
  @MS-MQMR/3.1.4.1/R37
  Scenario: While the directory is offline whether another queue is foreign is "Unknown"
    Given an outgoing queue "O" to a remote queue
    And the queue manager is configured with directory_integrated true, directory_offline true
    When the client asks queue "O" for PROPID_MGMT_QUEUE_FOREIGN, PROPID_MGMT_QUEUE_TYPE
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_FOREIGN "Unknown"

  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R37 @MS-MQMR/3.1.4.1/R38
  Scenario: On a foreign system every queue is foreign
    Given a private queue "A" with messages "one"
    And the queue manager is configured with foreign_system true
    When the client asks queue "A" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "A" has PROPID_MGMT_QUEUE_FOREIGN "YES"

  @MS-MQMR/3.1.4.1/R18 @MS-MQMR/3.1.4.1/R12
  Scenario: PROPID_MGMT_MSMQ_DSSERVER is the first directory server of an integrated queue manager
    Given the client has noted the connection state of the queue manager
    And the queue manager is configured with directory_integrated true, directory_server_list [DS-ONE DS-TWO]
    When the client asks the machine for all 6 machine properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine property PROPID_MGMT_MSMQ_DSSERVER is "DS-ONE"

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_DSSERVER is VT_NULL when the queue manager is not integrated, even with a server list
    Given the queue manager is configured with directory_integrated false, directory_offline false, directory_server_list [DS-ONE]
    When the client asks the machine for PROPID_MGMT_MSMQ_DSSERVER
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine property PROPID_MGMT_MSMQ_DSSERVER is VT_NULL

  @MS-MQMR/3.1.4.1/R18
  Scenario: PROPID_MGMT_MSMQ_DSSERVER is VT_NULL on a queue manager without a directory
    Given the queue manager is configured with directory_integrated false, directory_offline false
    When the client asks the machine for PROPID_MGMT_MSMQ_DSSERVER
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine property PROPID_MGMT_MSMQ_DSSERVER is VT_NULL

  # ------------------------------------------------------------------ the Open Queue event

  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R23
  @MS-MQMR/3.1.4.1/R26
  Scenario: A queue that does not exist cannot be opened, and the call fails
    Given a queue "X" that does not exist
    When the client asks queue "X" for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R26
  Scenario: A remote queue with no outgoing queue cannot be opened for receive, and the call fails
    Given a remote queue "R" with no outgoing queue
    When the client asks queue "R" for PROPID_MGMT_QUEUE_STATE
    Then R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R24
  @MS-MQMR/3.1.4.1/R25 @MS-MQMR/3.1.4.1/R26
  Scenario: Open Queue for receive access fails on a queue a client holds with MQ_DENY_RECEIVE_SHARE
    Given a private queue "A" with messages "one"
    And the client has opened queue "A" with RECEIVE_ACCESS and MQ_DENY_RECEIVE_SHARE
    When the client asks queue "A" for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R24
  @MS-MQMR/3.1.4.1/R26
  Scenario: Open Queue for receive access fails on a queue a client peeks with MQ_DENY_RECEIVE_SHARE
    Given a private queue "A" with messages "one"
    And the client has opened queue "A" with PEEK_ACCESS and MQ_DENY_RECEIVE_SHARE
    When the client asks queue "A" for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/3.1.4.1/R22 @MS-MQMR/3.1.4.1/R24 @MS-MQMR/3.1.4.1/R25 @MS-MQMR/3.1.4.1/R9
  Scenario: Open Queue with DenyNone succeeds beside a client's shared receive handle
    Given a private queue "A" with messages "one"
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client asks queue "A" for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

  @MS-MQMR/3.1.4.1/R21 @MS-MQMR/3.1.4.1/R26
  Scenario: A multicast outgoing queue cannot be opened for receive access
    Given an outgoing queue "M" to the multicast address "224.1.2.3:8001"
    When the client asks queue "M" for PROPID_MGMT_QUEUE_TYPE
    Then R_QMMgmtGetInfo fails without setting apVar

  # ------------------------------------------------------------------ parameter validation

  @MS-MQMR/3.1.4.1/R1 @MS-MQMR/3.1.4.1/R9
  Scenario Outline: cp may be anything from 1 to 128
    Given the client has noted the connection state of the queue manager
    When the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED <cp> times in one call
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

    Examples:
      | cp  |
      | 1   |
      | 2   |
      | 127 |
      | 128 |

  @MS-MQMR/3.1.4.1/R1 @MS-MQMR/3.1.4.1/R2 @MS-MQMR/3.1.4.1/R6 @MS-MQMR/3.1.4.1/R10
  Scenario Outline: cp outside 1..128 is refused
    When the client calls R_QMMgmtGetInfo on the machine with cp <cp> and as many elements
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | cp  |
      | 0   |
      | 129 |
      | 300 |

  @MS-MQMR/3.1.4.1/R5 @MS-MQMR/3.1.4.1/R8 @MS-MQMR/3.1.4.1/R10
  Scenario Outline: aProp and apVar of a length other than cp are refused
    When the client calls R_QMMgmtGetInfo on the machine with cp <cp>, <props> elements in aProp and <vars> in apVar
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | cp | props | vars |
      | 2  | 1     | 1    |
      | 1  | 2     | 2    |
      | 2  | 2     | 1    |
      | 1  | 1     | 2    |
      | 2  | 1     | 2    |

  @MS-MQMR/3.1.4.1/R3 @MS-MQMR/3.1.4.1/R15 @MS-MQMR/3.1.4.1/R10
  Scenario Outline: A property identifier outside the machine table is refused
    When the client asks the machine for property identifier <propid>
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | propid     |
      | 0          |
      | 7          |
      | 27         |
      | 4294967295 |

  @MS-MQMR/3.1.4.1/R3 @MS-MQMR/3.1.4.1/R16 @MS-MQMR/3.1.4.1/R10
  Scenario Outline: A property identifier outside the queue table is refused
    Given a private queue "A" with messages "one"
    When the client asks queue "A" for property identifier <propid>
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | propid |
      | 0      |
      | 28     |
      | 256    |

  @MS-MQMR/3.1.4.1/R3 @MS-MQMR/3.1.4.1/R15 @MS-MQMR/3.1.4.1/R12
  Scenario: A queue property identifier among machine properties makes the whole call fail
    When the client asks the machine for property identifiers 4, 12
    Then R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R10
  Scenario Outline: An apVar element that is not VT_NULL on input is refused
    When the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED with apVar[0] of type <vt>
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | vt        |
      | VT_EMPTY  |
      | VT_UI4    |
      | VT_LPWSTR |

  @MS-MQMR/3.1.4.1/R14 @MS-MQMR/3.1.4.1/R10
  Scenario: MGMT_SESSION is refused
    When the client asks a MGMT_SESSION object for PROPID_MGMT_MSMQ_CONNECTED
    Then R_QMMgmtGetInfo fails without setting apVar
