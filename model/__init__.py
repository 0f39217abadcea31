"""The reference model of MSMQ's queue manager: MS-MQDMPR's abstract data model and events, and
the server rules of MS-MQRR (RemoteRead) and MS-MQMR (qmmgmt) on top of them.

Conventions (a reader holding the documents should recognise the code at once):

* ADM elements are dataclasses named as the documents name them (``OpenQueueDescriptor``,
  ``MessagePosition``); ADM attributes are the documents' names in snake_case
  (``MessagePositionReference`` -> ``message_position_reference``); enumerations are
  ``enum.Enum`` classes whose members are spelled as in the documents
  (``QueueAccessType.ReceiveAccess``, ``MessagePositionState.Available``).
* Events are functions named after their section titles (``dequeue_message_end``), grouped in
  modules as the documents group them; each function's docstring names its section, and each
  step carries the requirement ID it implements in a comment (``# MS-MQDMPR/3.1.7.1.12/R5``),
  which the traceability scanner reads.
* Return values mirror the documents: an event returns ``rStatus`` (and ``rMessage``, ...) as a
  small result object; status codes are the constants of ``model.status``. Invalid input gives
  the documents' status codes, never an exception.
* Sans-IO and deterministic: no sockets, threads, clocks, files or randomness. Time comes in as
  an argument (``now``, milliseconds); handles and identifiers come from an injected generator.
"""
