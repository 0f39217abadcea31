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

  # A system queue a client opened is Active; whether PROPID_MGMT_MSMQ_ACTIVEQUEUES lists it,
  # and by what name, the documents leave open (errata system-queues-in-queue-collection), and
  # the check of the vector looks only at the queues the case made: the property is returned.
  @MS-MQMR/3.1.4.1/R17 @MS-MQMR/3.1.4.1/R18
  Scenario Outline: PROPID_MGMT_MSMQ_ACTIVEQUEUES is returned while a client has the system <kind> queue open
    Given the system <kind> queue "S"
    And the client has opened queue "S" with RECEIVE_ACCESS
    When the client asks the machine for PROPID_MGMT_MSMQ_ACTIVEQUEUES
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

    Examples:
      | kind                      |
      | journal                   |
      | dead-letter               |
      | transactional dead-letter |

  # MS-MQDMPR 3.1.1.2: an outgoing queue holding a message awaiting transfer is Active, with no
  # handle open; it has no Pathname, so it is listed by its destination's name.
  @MS-MQMR/3.1.4.1/R18 @MS-MQDMPR/3.1.1.2/R9
  Scenario: PROPID_MGMT_MSMQ_ACTIVEQUEUES lists an outgoing queue with a message awaiting transfer
    Given an outgoing queue "O" to a remote queue with a message awaiting transfer
    When the client asks the machine for PROPID_MGMT_MSMQ_ACTIVEQUEUES
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And the machine lists outgoing queue "O" in PROPID_MGMT_MSMQ_ACTIVEQUEUES by a name of its destination

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
  Scenario Outline: A system queue is reported with PROPID_MGMT_QUEUE_TYPE "MACHINE"
    Given the system <kind> queue "J"
    When the client asks queue "J" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "J" has PROPID_MGMT_QUEUE_TYPE "MACHINE"
    And queue "J" has PROPID_MGMT_QUEUE_XACT "<xact>"

    Examples:
      | kind                      | xact |
      | journal                   | NO   |
      | dead-letter               | NO   |
      | transactional dead-letter | YES  |

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

  # MS-MQDMPR 3.1.7.2.7 (R10-R14): a message outside a transaction whose Time-To-Be-Received
  # timer expires is deleted from its queue (Message Position Deleted); 0 expires at once
  # (3.1.2.4). A deleted message is no longer in the queue's MessagePositionList: not counted.
  @MS-MQMR/3.1.4.1/R40 @MS-MQDMPR/3.1.7.2.7/R10 @MS-MQDMPR/3.1.7.2.7/R11
  Scenario: PROPID_MGMT_QUEUE_MESSAGE_COUNT no longer counts a message whose time to be received ran out
    Given a private queue "A" with messages "brief, other", each with a time to be received of 0 seconds
    And the client has opened queue "A" with RECEIVE_ACCESS
    When the client waits 1 second
    Then queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0
    And queue "A" has PROPID_MGMT_QUEUE_BYTES_IN_QUEUE 0

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

  # Purge Queue deletes each Available message with iReason NackQueuePurged (MS-MQDMPR
  # 3.1.7.1.7 R7-R10): no receiver consumed it, so its queue journal gets no copy; nor does
  # a message whose time to be received ran out (3.1.7.2.7, NackReceiveTimeout).
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.7/R7 @MS-MQDMPR/3.1.7.1.7/R10
  Scenario: A message purged from a journaled queue is not copied to its queue journal
    Given a journaled private queue "J" with messages "one, two"
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client purges queue "J"
    Then queue "J" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0
    And queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    And queue "J" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 0

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

  # A queue journal is a queue with a quota of its own (Queue.JournalQuota, MS-MQDMPR 3.1.1.2,
  # in kilobytes): a copy that would exceed it is refused as Enqueue Message refuses a message
  # that would exceed a queue's Quota (3.1.7.1.9 R6-R8), and a quota filled to the octet is not
  # exceeded. The messages are sized by the target's own storage measure (what its
  # PROPID_MGMT_QUEUE_BYTES_IN_QUEUE grows by): with the measured one, the second would fill the
  # 4,096 octets and 4 more, the third exactly; the receives are not affected either way.
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.9/R6 @MS-MQDMPR/3.1.7.1.9/R7
  @MS-MQDMPR/3.1.7.1.9/R8
  Scenario: A queue journal keeps copies up to its quota to the octet, and none past it
    Given a journaled private queue "J" whose queue journal quota is 4 kilobytes
    And a message of 64 octets in queue "J", whose storage the client has measured
    And a message in queue "J" that takes 4100 octets of storage with the measured one
    And a message in queue "J" that takes 4096 octets of storage with the measured one
    And the client has opened queue "J" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    And the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    And the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    Then the target's queue "J" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0
    And the target's queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 2
    And the target's queue "J" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 4096

  # The queue journal is a queue a client may read: a message received from it and acknowledged
  # leaves its MessagePositionList (Message Position Deleted, MS-MQDMPR 3.1.7.2.1 R5), so the
  # journal properties of the queue it belongs to count it no more.
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.2.1/R3 @MS-MQDMPR/3.1.7.2.1/R5
  Scenario: Messages received from a queue journal leave it, and its queue's journal counts go down
    Given a journaled private queue "J" with messages "one, two"
    And the queue journal of queue "J" as queue "JJ"
    And the client has opened queue "J" with RECEIVE_ACCESS
    And the client has opened queue "JJ" with RECEIVE_ACCESS
    When the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    And the client starts a two-phase receive from queue "J"
    And the client acknowledges the receive
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 2
    When the client starts a two-phase receive from queue "JJ"
    And the client acknowledges the receive
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 1
    When the client starts a two-phase receive from queue "JJ"
    And the client acknowledges the receive
    Then queue "J" has PROPID_MGMT_QUEUE_JOURNAL_MESSAGE_COUNT 0
    And queue "J" has PROPID_MGMT_QUEUE_BYTES_IN_JOURNAL 0

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

  # NextHops (MS-MQDMPR 3.1.1.3), which the transfer protocol sets, is what the row gives while
  # the queue is Connected (not multicast) or Waiting.
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario Outline: PROPID_MGMT_QUEUE_NEXTHOPS lists the NextHops of an outgoing queue in state <state>
    Given an outgoing queue "O" to a remote queue in state <state> with NextHops ["10.1.2.3", "10.1.2.4"]
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_NEXTHOPS of type VT_VECTOR | VT_LPWSTR ["10.1.2.3", "10.1.2.4"]
    And queue "O" has PROPID_MGMT_QUEUE_STATE of type VT_LPWSTR "<value>"

    Examples:
      | state     | value     |
      | Connected | CONNECTED |
      | Waiting   | WAITING   |

  # In the other states the row gives no value: the entry stays VT_NULL, as the client sent it
  # (model/mqmr.py choice 2, spec/choices.yaml).
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario Outline: PROPID_MGMT_QUEUE_NEXTHOPS has no value for an outgoing queue in state <state>
    Given an outgoing queue "O" to a remote queue in state <state> with NextHops ["10.1.2.3", "10.1.2.4"]
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_NEXTHOPS of type VT_NULL
    And queue "O" has PROPID_MGMT_QUEUE_STATE of type VT_LPWSTR "<value>"

    Examples:
      | state          | value           |
      | Disconnected   | DISCONNECTED    |
      | Disconnecting  | DISCONNECTING   |
      | Inactive       | INACTIVE        |
      | Locked         | LOCKED          |
      | NeedValidation | NEED VALIDATION |
      | OnHold         | ONHOLD          |

  # ------------------------------------------------------------------ the EOD properties

  # The EOD rows read the outgoing queue's OutgoingTransferInfo (MS-MQDMPR 3.1.1.4), which the
  # transfer protocol keeps and SUT control provisions. A SEQUENCE_INFO is reported as its 16
  # octets (MS-MQMQ 2.2.5.1): SeqID, a 64-bit signed integer, then SeqNo and PrevNo, 32-bit
  # unsigned, each little-endian; a time is a VT_I4, a count a VT_UI4.
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R17 @MS-MQMR/3.1.4.1/R20
  @MS-MQMR/3.1.4.1/R27
  Scenario: The EOD properties of an outgoing queue report its OutgoingTransferInfo
    Given an outgoing queue "O" to a remote queue in state Connected whose OutgoingTransferInfo is
      | attribute         | value                                                    |
      | EodFirstNonAck    | {"SeqID": 0x0102030405060708, "SeqNo": 11, "PrevNo": 10} |
      | EodLastAck        | {"SeqID": 0x0102030405060708, "SeqNo": 10, "PrevNo": 9}  |
      | EodLastAckCount   | 2                                                        |
      | EodLastAckTime    | 1700000100                                               |
      | EodLastNonAck     | {"SeqID": 0x0102030405060708, "SeqNo": 13, "PrevNo": 12} |
      | EodNextSeq        | {"SeqID": 0x0102030405060708, "SeqNo": 14, "PrevNo": 13} |
      | EodNoAckCount     | 1                                                        |
      | EodNoReadCount    | 4                                                        |
      | EodResendCount    | 5                                                        |
      | EodResendInterval | 30                                                       |
      | EodResendTime     | 1700000200                                               |
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK of type VT_BLOB 0807060504030201 0A000000 09000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME of type VT_I4 1700000100
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT of type VT_UI4 2
    And queue "O" has PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK of type VT_BLOB 0807060504030201 0B000000 0A000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK of type VT_BLOB 0807060504030201 0D000000 0C000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_NEXT_SEQ of type VT_BLOB 0807060504030201 0E000000 0D000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_NO_READ_COUNT of type VT_UI4 4
    And queue "O" has PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT of type VT_UI4 1
    And queue "O" has PROPID_MGMT_QUEUE_EOD_RESEND_TIME of type VT_I4 1700000200
    And queue "O" has PROPID_MGMT_QUEUE_EOD_RESEND_INTERVAL of type VT_UI4 30
    And queue "O" has PROPID_MGMT_QUEUE_EOD_RESEND_COUNT of type VT_UI4 5

  # EOD_LAST_ACK has a value only while EodNoAckCount > 0; otherwise the row gives none and the
  # entry stays VT_NULL (model/mqmr.py choice 2). The SeqID is signed: -2 is FEFFFFFFFFFFFFFF.
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R17 @MS-MQMR/3.1.4.1/R20
  @MS-MQMR/3.1.4.1/R27
  Scenario: PROPID_MGMT_QUEUE_EOD_LAST_ACK has no value while every message sent is acknowledged
    Given an outgoing queue "O" to a remote queue in state Inactive whose OutgoingTransferInfo is
      | attribute       | value                                       |
      | EodFirstNonAck  | {"SeqID": -2, "SeqNo": 4, "PrevNo": 3}      |
      | EodLastAck      | {"SeqID": -2, "SeqNo": 3, "PrevNo": 2}      |
      | EodLastAckCount | 1                                           |
      | EodLastAckTime  | 1700000000                                  |
      | EodNextSeq      | {"SeqID": -2, "SeqNo": 4, "PrevNo": 3}      |
      | EodNoAckCount   | 0                                           |
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK of type VT_NULL
    And queue "O" has PROPID_MGMT_QUEUE_EOD_NO_ACK_COUNT of type VT_UI4 0
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK_COUNT of type VT_UI4 1
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_ACK_TIME of type VT_I4 1700000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_FIRST_NON_ACK of type VT_BLOB FEFFFFFFFFFFFFFF 04000000 03000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_NEXT_SEQ of type VT_BLOB FEFFFFFFFFFFFFFF 04000000 03000000
    And queue "O" has PROPID_MGMT_QUEUE_EOD_LAST_NON_ACK of type VT_BLOB 0000000000000000 00000000 00000000

  # EOD_SOURCE_INFO reads the queue's IncomingTransactionalTransferInfoCollection (MS-MQDMPR
  # 3.1.1.5) as the six vectors of MS-MQMQ 2.3.12.24, one entry per element; a Sequence ID is
  # the TxSequenceID as a 64-bit value, TimeStamp high and Ordinal low (MS-MQMQ 2.2.18.1.2).
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario: PROPID_MGMT_QUEUE_EOD_SOURCE_INFO reports the transactional transfers into a queue
    Given a transactional queue "T" whose IncomingTransactionalTransferInfoCollection is
      | FormatName                                    | SenderIdentifier                     | SequenceIdentifier                    | SequenceNumber | LastAccessTime | RejectCount |
      | DIRECT=HTTP://192.0.2.10/msmq/private$/orders | 0b0b0b0b-0000-4000-8000-000000000002 | {"Ordinal": 7, "TimeStamp": 0x65000000} | 12             | 1700000000     | 2           |
      | PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427    | 0C0C0C0C-0000-4000-8000-000000000003 | {"Ordinal": 1, "TimeStamp": 0x65000100} | 3              | 1700000300     | 0           |
    When the client asks queue "T" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "T" has PROPID_MGMT_QUEUE_EOD_SOURCE_INFO, a VT_VECTOR | VT_VARIANT of
      | item                 | vector of | entries                                                                                          |
      | Format name          | VT_LPWSTR | ["DIRECT=HTTP://192.0.2.10/msmq/private$/orders", "PUBLIC=1b4e28ba-2fa1-41d2-883f-0016d3cca427"] |
      | Sender ID            | VT_CLSID  | ["0b0b0b0b-0000-4000-8000-000000000002", "0c0c0c0c-0000-4000-8000-000000000003"]                 |
      | Sequence ID          | VT_UI8    | [0x6500000000000007, 0x6500010000000001]                                                         |
      | Sequence number      | VT_UI4    | [12, 3]                                                                                          |
      | Last access time     | VT_I4     | [1700000000, 1700000300]                                                                         |
      | Message reject count | VT_UI4    | [2, 0]                                                                                           |

  # ------------------------------------------------------------------ the connection history

  # CONNECTION_HISTORY reads OutgoingQueue.ConnectionHistory (MS-MQDMPR 3.1.1.3) as the vectors
  # of MS-MQMQ 2.3.12.25: the Status codes, the times and the error values (the fourth item,
  # the addresses, is compared with the oracle: model/mqmr.py choice 6). The Status codes are
  # MS-MQMQ's, row for row the Status values of MS-MQDMPR 3.1.1.3. An Error is an HRESULT,
  # signed: 0x80004005 is -2147467259.
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  @MS-MQDMPR/3.1.1.3/R2
  Scenario Outline: PROPID_MGMT_QUEUE_CONNECTION_HISTORY reports the Status <status> as <code>
    Given an outgoing queue "O" to a remote queue in state Waiting whose ConnectionHistory is
      | Status   | ConnectionHistoryTime | Error   | AddressList  |
      | <status> | 1700000000            | <error> | ["10.1.2.3"] |
    When the client asks queue "O" for PROPID_MGMT_QUEUE_CONNECTION_HISTORY
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_CONNECTION_HISTORY, a VT_VECTOR | VT_VARIANT of
      | item                               | vector of | entries      |
      | Status                             | VT_UI4    | [<code>]     |
      | Time at which the failure occurred | VT_I4     | [1700000000] |
      | Error indicator                    | VT_I4     | [<error>]    |

    Examples:
      | status                       | code       | error       |
      | InProcess                    | 0x00000000 | 0           |
      | EstablishPacketReceived      | 0x00000001 | 0           |
      | Established                  | 0x00000002 | 0           |
      | UnknownFailure               | 0x80000000 | -2147467259 |
      | PingFailure                  | 0x80000001 | -2147467259 |
      | SocketCreateFailure          | 0x80000002 | -2147467259 |
      | SocketBindFailure            | 0x80000003 | -2147467259 |
      | SocketConnectFailure         | 0x80000004 | -2147467259 |
      | TcpNotEnabled                | 0x80000005 | -2147467259 |
      | SocketSendFailure            | 0x80000006 | -2147467259 |
      | ConnectionNotReady           | 0x80000007 | -2147467259 |
      | DnsFailure                   | 0x80000008 | -2147467259 |
      | CertificateValidationFailure | 0x80000009 | -2147467259 |
      | ConnectionLimitReached       | 0x8000000A | -2147467259 |
      | ConnectionRefused            | 0x8000000B | -2147467259 |
      | RoutingDataNotAvailable      | 0x8000000C | -2147467259 |
      | LowResource                  | 0x8000000D | -2147467259 |

  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario: PROPID_MGMT_QUEUE_CONNECTION_HISTORY lists every entry of the ConnectionHistory in order
    Given an outgoing queue "O" to a remote queue in state Connected whose ConnectionHistory is
      | Status               | ConnectionHistoryTime | Error       | AddressList              |
      | InProcess            | 1700000000            | 0           | ["10.1.2.3", "10.1.2.4"] |
      | SocketConnectFailure | 1700000005            | -2147014835 | ["10.1.2.3"]             |
      | Established          | 1700000060            | 0           | ["10.1.2.4"]             |
    When the client asks queue "O" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_CONNECTION_HISTORY, a VT_VECTOR | VT_VARIANT of
      | item                               | vector of | entries                              |
      | Status                             | VT_UI4    | [0x00000000, 0x80000004, 0x00000002] |
      | Time at which the failure occurred | VT_I4     | [1700000000, 1700000005, 1700000060] |
      | Error indicator                    | VT_I4     | [0, -2147014835, 0]                  |

  # A queue whose path name has no private$ is a public queue (MS-MQMQ 2.1.1, MS-MQDMPR
  # 3.1.7.1.3); a queue manager that cannot make one without its directory leaves the case
  # inconclusive.
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQMR/3.1.4.1/R31 @MS-MQMR/3.1.4.1/R32
  Scenario: A public queue is reported with PROPID_MGMT_QUEUE_TYPE "PUBLIC"
    Given a public queue "P"
    When the client asks queue "P" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "P" has PROPID_MGMT_QUEUE_TYPE "PUBLIC"

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

  # Create Queue on a queue manager integrated with a directory it cannot reach: the default
  # security descriptor's MachineSid stays zero (MS-MQDMPR 3.1.7.1.3.1 R1, R2) and the queue is
  # made all the same, with the properties of any private queue.
  @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27 @MS-MQDMPR/3.1.7.1.3.1/R1 @MS-MQDMPR/3.1.7.1.3.1/R2
  Scenario: A private queue made while the directory is offline has the properties of any private queue
    Given the queue manager is configured with directory_integrated true, directory_offline true
    And a private queue "A" with messages "one"
    When the client asks queue "A" for all 27 queue properties
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1

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

  # A QUEUE_FORMAT of type QUEUE_FORMAT_TYPE_UNKNOWN (MS-MQMQ 2.2.6) is well formed and names
  # no queue: Open Queue cannot open it, and the method answers a failure, not an exception.
  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R26 @MS-MQMR/3.1.4/R4
  Scenario: A queue object whose queue format is of type UNKNOWN cannot be opened, and the call fails without an exception
    When the client asks a queue object whose queue format is of type UNKNOWN for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

  # A QUEUE_FORMAT of type QUEUE_FORMAT_TYPE_DL (MS-MQMQ 2.2.9 DL_ID) names a distribution
  # list: Open Queue expands it (MS-MQDMPR 3.1.7.1.5, Expand Format Name 3.1.7.3.8), and a list
  # that no directory resolves, or any list, is not a queue to open for receive. The method
  # answers a failure, not an exception.
  @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4.1/R26 @MS-MQMR/3.1.4/R4
  Scenario: A queue object whose queue format is a distribution list cannot be opened, and the call fails without an exception
    When the client asks a queue object whose queue format is of type DL for PROPID_MGMT_QUEUE_MESSAGE_COUNT
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

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

  # An outgoing queue holds the messages for one format name (MS-MQDMPR 3.1.1.3, Open Queue
  # 3.1.7.1.5 R79-R82): a private queue of another computer by its PRIVATE= name (MS-MQMQ
  # 2.1.4), or a connector's transactional queue (CONNECTOR=;XACTONLY, 2.1.6). R_QMMgmtGetInfo
  # finds it by the QUEUE_FORMAT of that name.
  @MS-MQMR/3.1.4.1/R9 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario Outline: An outgoing queue named by a <kind> format name is found by its queue format
    Given an outgoing queue "O" to a <kind> format name of another computer
    When the client asks queue "O" for PROPID_MGMT_QUEUE_STATE, PROPID_MGMT_QUEUE_LOCATION
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    And queue "O" has PROPID_MGMT_QUEUE_LOCATION "REMOTE"

    Examples:
      | kind                |
      | PRIVATE=            |
      | CONNECTOR=;XACTONLY |

  # MS-MQMQ 2.2.7: Flags, the high nibble of m_SuffixAndFlags, is 0x00 or 0x80, for every
  # suffix type, ;XACTONLY (0x4) included: a QUEUE_FORMAT with Flags 0x40 is malformed, even one
  # whose GUID and suffix name an outgoing queue the server has.
  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.1/R10
  Scenario: A connector queue format with Flags 0x40 is refused though it names an outgoing queue
    Given an outgoing queue "O" to a CONNECTOR=;XACTONLY format name of another computer
    When the client asks queue "O" with m_SuffixAndFlags 0x44 for PROPID_MGMT_QUEUE_STATE
    Then R_QMMgmtGetInfo fails without setting apVar

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

  # apVar is [in, out]: whatever the client put in it, well formed, comes back as it went (R10),
  # in a response carrying the failure, not an exception (3.1.4 R4).
  @MS-MQMR/3.1.4.1/R7 @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4/R4
  Scenario Outline: An apVar element that is not VT_NULL on input is refused
    When the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED with apVar[0] of type <vt>
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | vt                     |
      | VT_EMPTY               |
      | VT_UI4                 |
      | VT_LPWSTR              |
      | VT_BLOB                |
      | VT_BLOB of no octets   |
      | VT_CLSID               |
      | VT_VECTOR \| VT_UI4     |
      | VT_VECTOR \| VT_LPWSTR  |
      | VT_VECTOR \| VT_CLSID   |
      | VT_VECTOR \| VT_VARIANT |

  @MS-MQMR/3.1.4.1/R14 @MS-MQMR/3.1.4.1/R10
  Scenario: MGMT_SESSION is refused
    When the client asks a MGMT_SESSION object for PROPID_MGMT_MSMQ_CONNECTED
    Then R_QMMgmtGetInfo fails without setting apVar

  # R14 refuses the session object itself: a queue property (which names a queue the object
  # cannot designate: it has no QUEUE_FORMAT) fails alike, as a returned failure (3.1.4 R4).
  @MS-MQMR/3.1.4.1/R14 @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4/R4
  Scenario Outline: MGMT_SESSION is refused when it is asked for a queue property
    When the client asks a MGMT_SESSION object for <name>
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | name                           |
      | PROPID_MGMT_QUEUE_PATHNAME     |
      | PROPID_MGMT_QUEUE_MESSAGE_COUNT |
