Feature: MS-MQMR 3.1.4.2 R_QMMgmtAction (Opnum 1)
  The R_QMMgmtAction method requests the server to perform a management function on a specific
  queue or MSMQ installation. The effect of each action is read back with R_QMMgmtGetInfo,
  whose values are compared with what the model computes (the oracle). The queue manager is
  left connected or disconnected as the scenario found it.

  # ------------------------------------------------------------------ machine actions

  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R5 @MS-MQMR/3.1.4.2/R6
  @MS-MQMR/3.1.4.2/R7 @MS-MQMR/3.1.4.2/R9 @MS-MQMR/3.1.4.2/R13 @MS-MQMR/3.1.4.2/R15
  Scenario: DISCONNECT generates Take Offline
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "DISCONNECT" on the machine
    Then R_QMMgmtAction returns MQ_OK
    And the machine property PROPID_MGMT_MSMQ_CONNECTED is "DISCONNECTED"

  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R5 @MS-MQMR/3.1.4.2/R6
  @MS-MQMR/3.1.4.2/R7 @MS-MQMR/3.1.4.2/R8 @MS-MQMR/3.1.4.2/R13 @MS-MQMR/3.1.4.2/R14
  Scenario: CONNECT generates Bring Online
    Given the client has noted the connection state of the queue manager
    And the client has called R_QMMgmtAction "DISCONNECT" on the machine
    When the client calls R_QMMgmtAction "CONNECT" on the machine
    Then R_QMMgmtAction returns MQ_OK
    And the machine property PROPID_MGMT_MSMQ_CONNECTED is "CONNECTED"

  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R8 @MS-MQMR/3.1.4.2/R9 @MS-MQMR/3.1.4.2/R14
  @MS-MQMR/3.1.4.2/R15
  Scenario: CONNECT and DISCONNECT may be repeated
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "CONNECT" on the machine
    And the client calls R_QMMgmtAction "CONNECT" on the machine
    Then the machine property PROPID_MGMT_MSMQ_CONNECTED is "CONNECTED"
    When the client calls R_QMMgmtAction "DISCONNECT" on the machine
    And the client calls R_QMMgmtAction "DISCONNECT" on the machine
    Then the machine property PROPID_MGMT_MSMQ_CONNECTED is "DISCONNECTED"

  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R6 @MS-MQMR/3.1.4.2/R7 @MS-MQMR/3.1.4.2/R10
  @MS-MQMR/3.1.4.2/R13 @MS-MQMR/3.1.4.2/R16 @MS-MQMR/3.1.4.2/R17
  Scenario: TIDY generates Purge Queue for every queue of the QueueCollection
    Given a private queue "A" with messages "one, two"
    And a transactional queue "T" with messages "x, y, z"
    When the client calls R_QMMgmtAction "TIDY" on the machine
    Then R_QMMgmtAction returns MQ_OK
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0, or 2 where TIDY keeps the messages
    And queue "T" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0, or 3 where TIDY keeps the messages
    And queue "A" has PROPID_MGMT_QUEUE_BYTES_IN_QUEUE 0 if TIDY purged it

  @MS-MQMR/3.1.4.2/R10 @MS-MQMR/3.1.4.2/R16 @MS-MQMR/3.1.4.2/R17
  Scenario: TIDY leaves a message a client has received but not acknowledged until it is
    Given a private queue "A" with messages "one, two"
    And the client has opened queue "A" with RECEIVE_ACCESS
    And the client has started a two-phase receive from queue "A"
    When the client calls R_QMMgmtAction "TIDY" on the machine
    Then queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 1, or 2 where TIDY keeps the messages
    When the client acknowledges the receive
    Then queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 0, or 1 where TIDY keeps the messages

  # ------------------------------------------------------------------ queue actions

  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R6 @MS-MQMR/3.1.4.2/R7
  @MS-MQMR/3.1.4.2/R11 @MS-MQMR/3.1.4.2/R13 @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R19
  Scenario: PAUSE generates Pause Queue on the outgoing queue
    Given an outgoing queue "O" to a remote queue
    When the client calls R_QMMgmtAction "PAUSE" on queue "O"
    Then R_QMMgmtAction returns MQ_OK
    And queue "O" has PROPID_MGMT_QUEUE_STATE "ONHOLD"

  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R6 @MS-MQMR/3.1.4.2/R7
  @MS-MQMR/3.1.4.2/R12 @MS-MQMR/3.1.4.2/R13 @MS-MQMR/3.1.4.2/R20 @MS-MQMR/3.1.4.2/R21
  Scenario: RESUME generates Resume Queue on a paused outgoing queue
    Given an outgoing queue "O" to a remote queue
    And the client has called R_QMMgmtAction "PAUSE" on queue "O"
    When the client calls R_QMMgmtAction "RESUME" on queue "O"
    Then R_QMMgmtAction returns MQ_OK
    And queue "O" has PROPID_MGMT_QUEUE_STATE "INACTIVE"

  @MS-MQMR/3.1.4.2/R11 @MS-MQMR/3.1.4.2/R12 @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R20
  Scenario Outline: PAUSE and RESUME act on an outgoing queue in any state
    Given an outgoing queue "O" to a remote queue in state <state>
    When the client calls R_QMMgmtAction "PAUSE" on queue "O"
    Then queue "O" has PROPID_MGMT_QUEUE_STATE "ONHOLD"
    When the client calls R_QMMgmtAction "RESUME" on queue "O"
    Then queue "O" has PROPID_MGMT_QUEUE_STATE "INACTIVE"

    Examples:
      | state     |
      | Connected |
      | Waiting   |
      | Locked    |

  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R19 @MS-MQMR/3.1.4.2/R20
  @MS-MQMR/3.1.4.2/R21
  Scenario Outline: PAUSE and RESUME act on an outgoing queue to a multicast address
    # R_QMMgmtGetInfo cannot read its state: Open Queue refuses a multicast queue (3.1.4.1).
    # The port is any value of 0-65535 (MS-MQMQ 2.1.6, MULTICAST=Address:Port), the highest too.
    Given an outgoing queue "M" to the multicast address "<address>"
    When the client calls R_QMMgmtAction "PAUSE" on queue "M"
    Then R_QMMgmtAction returns MQ_OK
    When the client calls R_QMMgmtAction "RESUME" on queue "M"
    Then R_QMMgmtAction returns MQ_OK

    Examples:
      | address          |
      | 224.1.2.3:8001   |
      | 224.1.2.3:65535  |

  # A computer name may be 256 characters long (MS-MQMQ 2.1.1), an HTTP host too (2.1.2)
  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R19 @MS-MQMR/3.1.4.2/R20
  Scenario: PAUSE acts on an outgoing queue to an HTTP host name of the longest length
    Given an outgoing queue "H" to an HTTP host name of 256 characters
    When the client calls R_QMMgmtAction "PAUSE" on queue "H"
    Then R_QMMgmtAction returns MQ_OK

  # An HTTP(S) direct name separates /MSMQ, PRIVATE$ and the queue name with '/' as well as '\'
  # (spec/choices.yaml formats-http-separator: DIRECT=HTTP://host/msmq/private$/queue is the
  # spelling MSMQ's own documentation gives): both spellings name the same outgoing queue.
  @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R19
  Scenario: A queue action finds an HTTP outgoing queue whose format name separates its path with slashes
    Given an outgoing queue "H" to an HTTP host name of 12 characters
    And queue "h" is queue "H" with slashes between its path's parts
    When the client calls R_QMMgmtAction "PAUSE" on queue "h"
    Then R_QMMgmtAction returns MQ_OK
    When the client calls R_QMMgmtAction "RESUME" on queue "h"
    Then R_QMMgmtAction returns MQ_OK

  @MS-MQMR/3.1.4.2/R18 @MS-MQMR/3.1.4.2/R19
  Scenario: A queue action finds an outgoing queue whose format name is spelled in another case
    Given an outgoing queue "O" to a remote queue
    And queue "o" is queue "O" spelled in another case
    When the client calls R_QMMgmtAction "PAUSE" on queue "o"
    Then R_QMMgmtAction returns MQ_OK
    And queue "O" has PROPID_MGMT_QUEUE_STATE "ONHOLD"

  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R22 @MS-MQMR/3.1.4.2/R23
  Scenario: EOD_RESEND on an outgoing queue succeeds and leaves its state
    Given an outgoing queue "O" to a remote queue
    When the client calls R_QMMgmtAction "EOD_RESEND" on queue "O"
    Then R_QMMgmtAction returns MQ_OK
    And queue "O" has PROPID_MGMT_QUEUE_STATE "INACTIVE"
    And every queue property of queue "O" has the value the documents give

  @MS-MQMR/3.1.4.2/R2 @MS-MQMR/3.1.4.2/R22 @MS-MQMR/3.1.4.2/R23
  Scenario: EOD_RESEND is a queue action for any queue, a local one included
    Given a private queue "A" with messages "one"
    When the client calls R_QMMgmtAction "EOD_RESEND" on queue "A"
    Then R_QMMgmtAction returns MQ_OK
    And every queue property of queue "A" has the value the documents give

  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R2
  Scenario Outline: The action is not case-sensitive
    Given the client has noted the connection state of the queue manager
    And an outgoing queue "O" to a remote queue
    When the client calls R_QMMgmtAction "<action>" on the <object>
    Then R_QMMgmtAction returns MQ_OK
    And every queue property of queue "O" has the value the documents give
    And the machine property PROPID_MGMT_MSMQ_CONNECTED has the value the documents give

    Examples:
      | action     | object    |
      | connect    | machine   |
      | Disconnect | machine   |
      | tIdY       | machine   |
      | pause      | queue "O" |
      | Resume     | queue "O" |
      | eod_resend | queue "O" |

  # ------------------------------------------------------------------ refusals

  # "Not case-sensitive" matches case variants of the table's names; a dotless i (U+0131) is
  # no case variant of I: Unicode's default caseless matching (case folding, CaseFolding.txt)
  # leaves it as it is, and only a full upper-casing maps it to I.
  @MS-MQMR/3.1.4.2/R1 @MS-MQMR/3.1.4.2/R3 @MS-MQMR/3.1.4.2/R4
  Scenario Outline: An action outside the table is refused
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "<action>" on the machine
    Then R_QMMgmtAction fails
    And the machine property PROPID_MGMT_MSMQ_CONNECTED has the value the documents give

    Examples:
      | action       |
      | FOO          |
      |              |
      | RECONNECT    |
      | CONNECTED    |
      | DIS CONNECT  |
      | TIDY_ALL     |
      | RESEND       |
      | dıSCONNECT   |

  @MS-MQMR/3.1.4.2/R3 @MS-MQMR/3.1.4.2/R4
  Scenario Outline: A queue action on the machine is refused
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "<action>" on the machine
    Then R_QMMgmtAction fails

    Examples:
      | action     |
      | PAUSE      |
      | RESUME     |
      | EOD_RESEND |

  @MS-MQMR/3.1.4.2/R3 @MS-MQMR/3.1.4.2/R4
  Scenario Outline: A machine action on a queue is refused and changes nothing
    Given the client has noted the connection state of the queue manager
    And a private queue "A" with messages "one, two"
    When the client calls R_QMMgmtAction "<action>" on queue "A"
    Then R_QMMgmtAction fails
    And queue "A" has PROPID_MGMT_QUEUE_MESSAGE_COUNT 2
    And the machine property PROPID_MGMT_MSMQ_CONNECTED has the value the documents give

    Examples:
      | action     |
      | CONNECT    |
      | DISCONNECT |
      | TIDY       |

  @MS-MQMR/3.1.4.2/R4
  Scenario Outline: PAUSE and RESUME are valid for outgoing queues only
    Given a private queue "A" with messages "one"
    When the client calls R_QMMgmtAction "<action>" on queue "A"
    Then R_QMMgmtAction fails
    And every queue property of queue "A" has the value the documents give

    Examples:
      | action |
      | PAUSE  |
      | RESUME |

  @MS-MQMR/3.1.4.2/R4 @MS-MQMR/3.1.4.2/R19 @MS-MQMR/3.1.4.2/R21 @MS-MQMR/3.1.4.2/R23
  Scenario Outline: A queue action on a queue that does not exist fails
    Given a queue "X" that does not exist
    When the client calls R_QMMgmtAction "<action>" on queue "X"
    Then R_QMMgmtAction fails

    Examples:
      | action     |
      | PAUSE      |
      | RESUME     |
      | EOD_RESEND |

  @MS-MQMR/3.1.4.2/R4 @MS-MQMR/3.1.4.2/R19
  Scenario: PAUSE on a remote queue that has no outgoing queue fails
    Given a remote queue "R" with no outgoing queue
    When the client calls R_QMMgmtAction "PAUSE" on queue "R"
    Then R_QMMgmtAction fails

  @MS-MQMR/3.1.4.2/R3 @MS-MQMR/3.1.4.2/R4
  Scenario Outline: MGMT_SESSION is refused for every action
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "<action>" on a MGMT_SESSION object
    Then R_QMMgmtAction fails
    And the machine property PROPID_MGMT_MSMQ_CONNECTED has the value the documents give

    Examples:
      | action     |
      | CONNECT    |
      | DISCONNECT |
      | TIDY       |
      | PAUSE      |
