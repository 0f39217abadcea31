Feature: MS-MQMR 2.2.1.2 MGMT_OBJECT
  The MGMT_OBJECT structure defines information on a queue, a computer, or a session; its type
  MUST be 1, 2 or 3 (MgmtObjectType, section 2.2.2.1).

  @MS-MQMR/2.2.1.2/R1
  Scenario Outline: R_QMMgmtGetInfo on an MGMT_OBJECT whose type is not 1, 2 or 3 fails
    When the client asks an MGMT_OBJECT of type <type> for PROPID_MGMT_MSMQ_CONNECTED
    Then R_QMMgmtGetInfo fails without setting apVar

    Examples:
      | type  |
      | 0     |
      | 4     |
      | 65535 |

  @MS-MQMR/2.2.1.2/R1
  Scenario Outline: R_QMMgmtAction on an MGMT_OBJECT whose type is not 1, 2 or 3 fails
    Given the client has noted the connection state of the queue manager
    When the client calls R_QMMgmtAction "DISCONNECT" on an MGMT_OBJECT of type <type>
    Then R_QMMgmtAction fails
    And the machine property PROPID_MGMT_MSMQ_CONNECTED has the value the documents give

    Examples:
      | type |
      | 0    |
      | 4    |

  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.1/R12 @MS-MQMR/3.1.4.1/R13
  Scenario: MGMT_MACHINE and MGMT_QUEUE select the machine and queue tables
    Given a private queue "A" with messages "one"
    When the client asks the machine for PROPID_MGMT_MSMQ_PRIVATEQ
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
    When the client asks queue "A" for PROPID_MGMT_QUEUE_PATHNAME
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give

  # MS-MQMQ 2.2.7 and 2.2.11: the suffix type (the low 4 bits of m_SuffixAndFlags) is one of
  # QUEUE_SUFFIX_TYPE's values, 0 to 5. An MGMT_QUEUE object whose QUEUE_FORMAT has another is
  # well formed on the wire and names nothing: a failure, returned, not thrown (MS-MQMR 3.1.4).
  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4/R4
  Scenario: R_QMMgmtGetInfo on a queue object whose queue format has an undefined suffix type fails without an exception
    When the client asks a queue object whose queue format has the undefined suffix type 7 for PROPID_MGMT_MSMQ_CONNECTED
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.2/R4 @MS-MQMR/3.1.4/R4
  Scenario: R_QMMgmtAction on a queue object whose queue format has an undefined suffix type fails without an exception
    When the client calls R_QMMgmtAction "PAUSE" on a queue object whose queue format has the undefined suffix type 7
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtAction fails

  # pQueueFormat, the MGMT_QUEUE arm, is a unique pointer (MS-MQMR 2.2.1.2): NDR carries it
  # NULL, and an MGMT_QUEUE object without a QUEUE_FORMAT designates no queue: a failure,
  # returned, not thrown (MS-MQMR 3.1.4).
  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.1/R10 @MS-MQMR/3.1.4/R4
  Scenario: R_QMMgmtGetInfo on a queue object without a queue format fails without an exception
    When the client asks a queue object without a queue format for PROPID_MGMT_MSMQ_CONNECTED
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtGetInfo fails without setting apVar

  @MS-MQMR/2.2.1.2/R1 @MS-MQMR/3.1.4.2/R4 @MS-MQMR/3.1.4/R4
  Scenario: R_QMMgmtAction on a queue object without a queue format fails without an exception
    When the client calls R_QMMgmtAction "PAUSE" on a queue object without a queue format
    Then the qmmgmt method returns a failure HRESULT without an exception
    And R_QMMgmtAction fails
