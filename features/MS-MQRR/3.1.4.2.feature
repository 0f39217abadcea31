Feature: MS-MQRR 3.1.4.2 R_OpenQueue (Opnum 2)
  The R_OpenQueue method opens a queue in preparation for subsequent operations against it.
  It returns a QUEUE_CONTEXT_HANDLE_SERIALIZE handle; it has no return value, and a failure
  is an HRESULT thrown as an RPC exception.

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R19 @MS-MQRR/3.1.4.2/R22 @MS-MQRR/3.1.4.2/R25 @MS-MQRR/3.1.4.2/R26 @MS-MQRR/3.1.4.2/R27 @MS-MQRR/3.1.4.2/R28 @MS-MQRR/3.1.4.2/R29 @MS-MQRR/3.1.4.2/R30
  Scenario: Opening an existing queue with RECEIVE_ACCESS returns a context handle for it
    Given a queue with messages "one, two"
    When the client calls R_OpenQueue with RECEIVE_ACCESS
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R27 @MS-MQRR/3.1.4.2/R29 @MS-MQRR/3.1.4.2/R30
  Scenario: A handle opened with PEEK_ACCESS peeks but does not receive
    Given a queue with messages "one"
    When the client calls R_OpenQueue with PEEK_ACCESS
    Then the returned context handle is not NULL
    And a peek finds the message "one"
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE
    Then the call fails

  @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A dwAccess other than RECEIVE_ACCESS or PEEK_ACCESS is refused
    Given a queue with messages "one"
    When the client calls R_OpenQueue with dwAccess <access>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | access     |
      | 0x00000000 |
      | 0x00000002 |
      | 0x00000004 |
      | 0x00000021 |
      | 0x00000080 |
      | 0xFFFFFFFF |

  @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A dwShareMode other than MQ_DENY_NONE or MQ_DENY_SHARE is refused
    Given a queue with messages "one"
    When the client calls R_OpenQueue with dwShareMode <share>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | share      |
      | 0x00000002 |
      | 0x00000003 |
      | 0xFFFFFFFF |

  @MS-MQRR/3.1.4.2/R24
  Scenario: A queue that does not exist is not found
    Given an empty queue
    When the client calls R_OpenQueue with a DIRECT queue format that names no queue
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

  @MS-MQRR/3.1.4.2/R24 @MS-MQDMPR/3.1.7.1.4/R11
  Scenario: A queue that was deleted is not found
    Given a queue with messages "a"
    When the queue is deleted through SUT control
    And the client calls R_OpenQueue with RECEIVE_ACCESS
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

  @MS-MQRR/3.1.4.2/R28 @MS-MQRR/3.1.4.2/R29
  Scenario: With MQ_DENY_NONE several handles may be open on one queue at once
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS and MQ_DENY_NONE
    When the client calls R_OpenQueue with RECEIVE_ACCESS and MQ_DENY_NONE
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R28 @MS-MQRR/3.1.4.2/R29
  Scenario: A handle opened with MQ_DENY_SHARE keeps other handles from receiving
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS and MQ_DENY_SHARE
    When the client calls R_OpenQueue with RECEIVE_ACCESS and MQ_DENY_NONE
    Then the call throws MQ_ERROR_SHARING_VIOLATION

  @MS-MQRR/3.1.4.2/R5 @MS-MQRR/3.1.4.2/R6 @MS-MQRR/3.1.4.2/R9
  Scenario Outline: The server ignores pClientId
    Given a queue with messages "one"
    When the client calls R_OpenQueue with pClientId <client> and fNonRoutingServer <routing>
    Then the returned context handle is not NULL
    And a peek finds the message "one"

    Examples:
      | client                               | routing |
      | 00000000-0000-0000-0000-000000000000 | 1       |
      | 11111111-2222-4333-8444-555555555555 | 1       |
      | 11111111-2222-4333-8444-555555555555 | 0       |
      | ffffffff-ffff-ffff-ffff-ffffffffffff | 0       |

  @MS-MQRR/3.1.4.2/R11 @MS-MQRR/3.1.4.2/R13 @MS-MQRR/3.1.4.2/R15 @MS-MQRR/3.1.4.2/R18
  Scenario Outline: The server ignores Major, Minor and BuildNumber, and opens the queue whatever fWorkgroup says
    Given a queue with messages "one"
    When the client calls R_OpenQueue with Major <major>, Minor <minor>, BuildNumber <build> and fWorkgroup <workgroup>
    Then the returned context handle is not NULL
    And a peek finds the message "one"

    Examples:
      | major | minor | build | workgroup |
      | 0     | 0     | 0     | 0         |
      | 6     | 3     | 9600  | 1         |
      | 255   | 255   | 65535 | 0         |
