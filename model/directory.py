"""MS-MQDMPR 3.1.7.1.18-3.1.7.1.25: the directory events (Create Directory Object, Delete
Directory Object, Read Directory, Read Directory Begin/Next/End, Write Directory, Check Directory
Online); the timers 3.1.2.1 Directory Sites Update Timer, 3.1.2.2 Directory Site Gates Update
Timer and 3.1.2.5 Directory Online Timer; and the timer events 3.1.6.1 Directory Sites Update and
3.1.6.2 Directory Site Gates Update.

How the pieces fit:

* The directory itself (Active Directory through [MS-MQDSSM], or the MSMQ Directory Service of
  [MS-MQDS]) is outside the queue manager. :class:`Directory` stands in for it: it holds the
  published directory objects by type, evaluates attribute filters, keeps result sets for Read
  Directory Begin/Next/End (one handle per enumeration), can be disconnected, and answers with
  DirectoryOperationResult values. Its ``dssm_*`` methods are the [MS-MQDSSM] 3.1.6 events the
  MS-MQDMPR events delegate to. Put it on the Environment: ``Directory(env)`` sets
  ``env.directory``. An Environment without one behaves as a directory that is not connected.
* The MS-MQDMPR events are the module functions (``read_directory(env, ...)``); they add the
  queue manager's side: going offline (LocalQueueManager.DirectoryOffline) when the directory
  is not connected, the Directory Online Timer that polls it (Check Directory Online), and the
  [MS-MQCN] Send Change Notification events, which the model does not send: the Directory
  records them in ``change_notifications`` (MS-MQCN is outside the model).
* The Directory also has methods named as the events (``env.directory.read_directory(...)``)
  that call them, so either style gives the same behaviour.

Attribute filters (3.1.7.1.20): ``filter`` is a sequence of expressions, each a 3-tuple
``(attribute, operator, value)`` (:class:`AttributeFilter` names the fields), e.g.
``[("Identifier", "EQUALS", qm.identifier)]``; a single 3-tuple is taken as a one-element array
and ``None`` is the document's NULL. The attribute is named as the document names it
("ComputerName") or in snake_case ("computer_name"); the operator is one of EQUALS, NOT-EQUALS,
LESS-THAN, GREATER-THAN, LESS-THAN-OR-EQUAL, GREATER-THAN-OR-EQUAL. An enumeration attribute
also compares equal to its member's spelling ("WinServer"). Attribute lists name attributes the
same way; a single string is a one-element list.

What the stand-in does where [MS-MQDSSM] holds the details (choice 1, of the model, not of
MS-MQDMPR): objects of a type are kept, and "first" is taken, in creation order; Create assigns
a new GUID when the object's Identifier is GUID_NULL and refuses an Identifier already held
(ObjectAlreadyExists); only the attributes in iAttributeList are published, and reading one that
was not published gives AttributeNotFound; a filter on an attribute an object lacks does not
match it; a read gives a new instance holding only the attributes read (the others keep their
defaults: undefined, 3.1.7.1.20/R4), never the stored record; a Queue read back is Public and
refers to the QueueManager it was created under (the directory keeps a queue below its queue
manager's object); an unknown type, operator or query handle gives GenericError, an unknown
attribute name AttributeNotFound; a disconnected directory answers everything with
DirectoryNotConnected.

Ambiguities resolved here:

* 3.1.1.1 says DirectoryOffline MUST be False when DirectoryIntegrated is False. The events set
  it to True on DirectoryNotConnected without a condition; the model does so (and starts the
  Directory Online Timer) only for a directory-integrated queue manager, and returns
  DirectoryNotConnected either way.
* Check Directory Online (3.1.7.1.25): the closing "Else if the rStatus ... is not Success: Start
  the Directory Online Timer" is read as the else of the queue manager's read. That read is
  forced, so Read Directory does not restart the timer itself; without this reading a queue
  manager that is still offline would stop polling. (A failed read of a queue is handled by
  Read Directory, which restarts the timer when the directory is not connected.)
* 3.1.2.1 and 3.1.2.2 do not say that the update timers restart after their events; where the
  document restarts a timer it says so (3.1.7.1.25), so the model fires each once per start.
* Durations are model milliseconds: Directory Sites Update Timer 12 hours by default (SHOULD,
  3.1.2.1), Directory Site Gates Update Timer 1 hour by default (SHOULD, 3.1.2.2), both
  configurable (MAY); Directory Online Timer one minute (MUST, 3.1.2.5).
"""

from __future__ import annotations

import copy
import operator
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, NamedTuple

from mqconform.model.adm import (
    DIRECTORY_ATTRIBUTES,
    GUID,
    GUID_NULL,
    ConnectedNetwork,
    DirectoryObject,
    DirectoryOperationResult,
    Enterprise,
    Enumeration,
    Queue,
    QueueManager,
    QueueType,
    RoutingLink,
    Site,
    User,
)
from mqconform.model.runtime import Environment

Success = DirectoryOperationResult.Success
GenericError = DirectoryOperationResult.GenericError
DirectoryNotConnected = DirectoryOperationResult.DirectoryNotConnected
ObjectNotFound = DirectoryOperationResult.ObjectNotFound
AttributeNotFound = DirectoryOperationResult.AttributeNotFound
EndOfData = DirectoryOperationResult.EndOfData
ObjectAlreadyExists = DirectoryOperationResult.ObjectAlreadyExists

#: iDirectoryObjectType: the ADM elements that extend DirectoryObject (3.1.1), by name
DIRECTORY_OBJECT_TYPES: dict[str, type[DirectoryObject]] = {
    cls.__name__: cls
    for cls in (QueueManager, Queue, Enterprise, Site, RoutingLink, ConnectedNetwork, User)}

#: 3.1.2.1 Directory Sites Update Timer: 12 hours by default (MS-MQDMPR/3.1.2.1/R1)
DIRECTORY_SITES_UPDATE_TIMER_DEFAULT = 12 * 60 * 60 * 1000
#: 3.1.2.2 Directory Site Gates Update Timer: 1 hour by default (MS-MQDMPR/3.1.2.2/R1)
DIRECTORY_SITE_GATES_UPDATE_TIMER_DEFAULT = 60 * 60 * 1000
#: 3.1.2.5 Directory Online Timer: one minute (MS-MQDMPR/3.1.2.5/R1)
DIRECTORY_ONLINE_TIMER_DURATION = 60 * 1000


# ---------------------------------------------------------------------------------------------
# Attribute filters, attribute lists, sort orders
# ---------------------------------------------------------------------------------------------


class AttributeFilter(NamedTuple):
    """3.1.7.1.20: an attribute-filter expression (a plain 3-tuple works the same)."""

    attribute: str  # left side: a directory attribute of the object type
    operator: str  # EQUALS, NOT-EQUALS, LESS-THAN, GREATER-THAN, ...-OR-EQUAL
    value: Any  # right side


class AttributeSortOrder(NamedTuple):
    """3.1.7.1.21: an attribute-sort-order value (a plain 2-tuple works the same)."""

    sort_priority: int  # higher first; 0: not used for sorting
    sort_ascending: bool


#: the operators of an attribute-filter expression (3.1.7.1.20)
OPERATORS = {
    "EQUALS": operator.eq,
    "NOT-EQUALS": operator.ne,
    "LESS-THAN": operator.lt,
    "GREATER-THAN": operator.gt,
    "LESS-THAN-OR-EQUAL": operator.le,
    "GREATER-THAN-OR-EQUAL": operator.ge,
}


def directory_attributes(cls: type) -> tuple[str, ...]:
    """The directory attributes of an ADM element type (its own and its bases', from
    model.adm.DIRECTORY_ATTRIBUTES), base first."""
    names: list[str] = []
    for base in reversed(cls.__mro__):
        names.extend(n for n in DIRECTORY_ATTRIBUTES.get(base, ()) if n not in names)
    return tuple(names)


def _type_name(directory_object: Any) -> str | None:
    for cls in type(directory_object).__mro__:
        if DIRECTORY_OBJECT_TYPES.get(cls.__name__) is cls:
            return cls.__name__
    return None


def _squash(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _attribute(cls: type, name: str) -> str | None:
    """The snake_case directory attribute of ``cls`` that ``name`` (document or snake_case
    spelling) names, or None."""
    wanted = _squash(name)
    return next((n for n in directory_attributes(cls) if _squash(n) == wanted), None)


def _as_list(items: Any) -> list | None:
    if items is None:
        return None
    if isinstance(items, str):
        return [items]
    return list(items)


def _as_filter(expressions: Any) -> list | None:
    if expressions is None:
        return None
    if isinstance(expressions, tuple) and len(expressions) == 3 and isinstance(
            expressions[0], str):
        return [expressions]
    return list(expressions)


def _resolve_attributes(cls: type, names: Any) -> list[str] | DirectoryOperationResult | None:
    names = _as_list(names)
    if names is None:
        return None
    out = []
    for name in names:
        resolved = _attribute(cls, name)
        if resolved is None:
            return AttributeNotFound
        out.append(resolved)
    return out


def _resolve_filter(cls: type, expressions: Any) -> list[tuple] | DirectoryOperationResult:
    out = []
    for expression in _as_filter(expressions) or ():
        try:
            name, op, value = expression
        except (TypeError, ValueError):
            return GenericError
        compare = OPERATORS.get(op)
        if compare is None:
            return GenericError
        attribute = _attribute(cls, name)
        if attribute is None:
            return AttributeNotFound
        out.append((attribute, compare, value))
    return out


def _satisfies(get: Any, resolved: list[tuple]) -> bool:
    """True when every expression holds; ``get(name)`` gives (present, value)."""
    for attribute, compare, value in resolved:
        present, left = get(attribute)
        if not present:
            return False
        if isinstance(left, Enum) and isinstance(value, str):
            left = left.value
        try:
            if not compare(left, value):
                return False
        except TypeError:
            return False
    return True


def matches(directory_object: Any, filter: Any) -> bool:
    """Whether an ADM element instance satisfies every attribute-filter expression of
    ``filter`` (NULL: every instance does). An expression the type cannot evaluate (an unknown
    attribute or operator) does not match."""
    resolved = _resolve_filter(type(directory_object), filter)
    if isinstance(resolved, DirectoryOperationResult):
        return False
    return _satisfies(lambda n: (True, getattr(directory_object, n)), resolved)


def update_adm_attributes(target: Any, source: Any) -> None:
    """"Update the ADM attributes of <target> with the ADM attributes of the returned <source>":
    the directory attributes the read returned (all of them for a local instance)."""
    if source is target:
        return
    names = source._directory_attributes_read if isinstance(source, DirectoryObject) else None
    for name in names if names is not None else directory_attributes(type(source)):
        setattr(target, name, copy.copy(getattr(source, name)))


def _sort_value(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


# ---------------------------------------------------------------------------------------------
# Return values
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateDirectoryObjectResult:
    """rStatus and rObjectGUID of Create Directory Object (3.1.7.1.18)."""

    status: DirectoryOperationResult
    object_guid: GUID | None = None  # undefined unless status is Success


@dataclass(frozen=True)
class ReadDirectoryResult:
    """rStatus and rDirectoryObject of Read Directory (3.1.7.1.20) and Read Directory Next
    (3.1.7.1.22)."""

    status: DirectoryOperationResult
    directory_object: Any = None  # undefined unless status is Success


@dataclass(frozen=True)
class ReadDirectoryBeginResult:
    """rStatus and rQueryHandle of Read Directory Begin (3.1.7.1.21)."""

    status: DirectoryOperationResult
    query_handle: int | None = None  # undefined unless status is Success


class ChangeNotificationOperation(Enumeration):
    """[MS-MQCN] 3.3.4.1 Send Change Notification: the iOperation values MS-MQDMPR passes."""

    QueueCreation = auto()
    QueueDeletion = auto()
    QueueUpdate = auto()
    QueueManagerUpdate = auto()


@dataclass(frozen=True)
class ChangeNotification:
    """One Send Change Notification ([MS-MQCN] 3.3.4.1) event the queue manager generated."""

    operation: ChangeNotificationOperation
    directory_object: Any


# ---------------------------------------------------------------------------------------------
# The directory: a stand-in for [MS-MQDSSM] (Active Directory)
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Record:
    cls: type
    attributes: dict[str, Any]  # snake_case name -> value; only the published attributes
    queue_manager: Any = None  # for a Queue: the QueueManager it was created under


@dataclass(eq=False)
class _Query:
    records: list[_Record]
    attributes: list[str] | None
    next_index: int = 0


@dataclass(eq=False)
class Directory:
    """An in-memory directory service: the [MS-MQDSSM] 3.1.6 events (``dssm_*``) that the
    MS-MQDMPR directory events delegate to, over directory objects held by type.

    ``connected`` False makes every operation answer DirectoryNotConnected.
    ``change_notifications`` lists the Send Change Notification events, in order."""

    env: Environment | None = None
    connected: bool = True
    change_notifications: list[ChangeNotification] = field(default_factory=list)
    _objects: dict[str, list[_Record]] = field(default_factory=dict, repr=False)
    _queries: dict[int, _Query] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.env is not None:
            self.attach(self.env)

    def attach(self, env: Environment) -> Directory:
        """Make this the directory of ``env`` (``env.directory``)."""
        self.env = env
        env.directory = self
        return self

    # ------------------------------------------------------------------ administration
    def add(self, directory_object: DirectoryObject, queue_manager: Any = None) -> GUID:
        """Publish an object with all its directory attributes, as an administrator would
        (not an MS-MQDMPR event; works while disconnected). A GUID_NULL Identifier gets a new
        GUID from ``env.ids``. Returns the Identifier."""
        name = _type_name(directory_object)
        if name is None:
            raise TypeError(f"{type(directory_object).__name__} is not a DirectoryObject type")
        identifier = directory_object.identifier
        if identifier == GUID_NULL:
            identifier = self._ids().guid()
        self._store(name, directory_object, directory_attributes(DIRECTORY_OBJECT_TYPES[name]),
                    identifier, queue_manager)
        return identifier

    def lookup(self, identifier: GUID) -> DirectoryObject | None:
        """A copy of the object the directory holds under ``identifier`` (for inspection)."""
        record = self._find(identifier)
        return None if record is None else self._materialize(record, None)

    def objects(self, directory_object_type: str) -> list[DirectoryObject]:
        """Copies of every object of a type, in the directory's order (for inspection)."""
        return [self._materialize(r, None) for r in self._objects.get(directory_object_type, [])]

    @property
    def query_handles(self) -> list[int]:
        """The handles of the enumerations begun and not ended."""
        return list(self._queries)

    def send_change_notification(self, operation: ChangeNotificationOperation,
                                 directory_object: Any) -> None:
        """[MS-MQCN] 3.3.4.1 Send Change Notification: recorded, not sent (outside the model)."""
        self.change_notifications.append(ChangeNotification(operation, directory_object))

    # ------------------------------------------------------------------ the MS-MQDMPR events
    # Each calls the module function of the same name (the event) with this directory's env.

    def create_directory_object(self, directory_object: DirectoryObject,
                                attribute_list: Any = None) -> CreateDirectoryObjectResult:
        return create_directory_object(self._env(), directory_object, attribute_list)

    def delete_directory_object(self, directory_object: DirectoryObject
                                ) -> DirectoryOperationResult:
        return delete_directory_object(self._env(), directory_object)

    def read_directory(self, directory_object_type: str, filter: Any = None,
                       attribute_list: Any = None,
                       force_directory_read: bool = False) -> ReadDirectoryResult:
        return read_directory(self._env(), directory_object_type, filter, attribute_list,
                              force_directory_read)

    def read_directory_begin(self, directory_object_type: str, filter: Any = None,
                             attribute_list: Any = None,
                             attribute_sort_order: Any = None) -> ReadDirectoryBeginResult:
        return read_directory_begin(self._env(), directory_object_type, filter, attribute_list,
                                    attribute_sort_order)

    def read_directory_next(self, query_handle: int) -> ReadDirectoryResult:
        return read_directory_next(self._env(), query_handle)

    def read_directory_end(self, query_handle: int) -> DirectoryOperationResult:
        return read_directory_end(self._env(), query_handle)

    def write_directory(self, directory_object: DirectoryObject,
                        attribute_list: Any = None) -> DirectoryOperationResult:
        return write_directory(self._env(), directory_object, attribute_list)

    # ------------------------------------------------------------------ [MS-MQDSSM] 3.1.6
    def dssm_create_directory_object(self, env: Environment, directory_object: Any,
                                     attribute_list: Any = None) -> CreateDirectoryObjectResult:
        """[MS-MQDSSM] 3.1.6.1 Create Directory Object, as the stand-in does it."""
        if not self.connected:
            return CreateDirectoryObjectResult(DirectoryNotConnected)
        name = _type_name(directory_object)
        if name is None:
            return CreateDirectoryObjectResult(GenericError)
        cls = DIRECTORY_OBJECT_TYPES[name]
        names = _resolve_attributes(cls, attribute_list)
        if isinstance(names, DirectoryOperationResult):
            return CreateDirectoryObjectResult(names)
        identifier = directory_object.identifier
        if identifier != GUID_NULL and self._find(identifier) is not None:
            return CreateDirectoryObjectResult(ObjectAlreadyExists)
        if identifier == GUID_NULL:
            identifier = env.ids.guid()
        queue_manager = getattr(directory_object, "queue_manager", None)
        self._store(name, directory_object, names if names is not None
                    else directory_attributes(cls), identifier, queue_manager)
        return CreateDirectoryObjectResult(Success, identifier)

    def dssm_delete_directory_object(self, env: Environment,
                                     directory_object: Any) -> DirectoryOperationResult:
        """[MS-MQDSSM] 3.1.6.2 Delete Directory Object, as the stand-in does it."""
        if not self.connected:
            return DirectoryNotConnected
        record = self._find(directory_object.identifier, _type_name(directory_object))
        if record is None:
            return ObjectNotFound
        self._objects[record.cls.__name__].remove(record)
        return Success

    def dssm_read_directory(self, env: Environment, directory_object_type: str, filter: Any,
                            attribute_list: Any = None) -> ReadDirectoryResult:
        """[MS-MQDSSM] 3.1.6.3 Read Directory, as the stand-in does it."""
        if not self.connected:
            return ReadDirectoryResult(DirectoryNotConnected)
        found = self._select(directory_object_type, filter, attribute_list)
        if isinstance(found, DirectoryOperationResult):
            return ReadDirectoryResult(found)
        records, names = found
        if not records:
            return ReadDirectoryResult(ObjectNotFound)
        # MS-MQDMPR/3.1.7.1.20/R2 MS-MQDMPR/3.1.7.1.20/R3: the first that satisfies all the
        # expressions (the first of the type when iFilter is NULL); MS-MQDMPR/3.1.7.1.20/R5
        record = records[0]
        if names is not None and any(n not in record.attributes for n in names):
            return ReadDirectoryResult(AttributeNotFound)
        return ReadDirectoryResult(Success, self._materialize(record, names))

    def dssm_read_directory_begin(self, env: Environment, directory_object_type: str,
                                  filter: Any, attribute_list: Any = None,
                                  attribute_sort_order: Any = None) -> ReadDirectoryBeginResult:
        """[MS-MQDSSM] 3.1.6.4 Read Directory Begin, as the stand-in does it: the result set is
        chosen and ordered now; Next skips objects deleted since."""
        if not self.connected:
            return ReadDirectoryBeginResult(DirectoryNotConnected)
        found = self._select(directory_object_type, filter, attribute_list)
        if isinstance(found, DirectoryOperationResult):
            return ReadDirectoryBeginResult(found)
        # MS-MQDMPR/3.1.7.1.21/R2 MS-MQDMPR/3.1.7.1.21/R3: every object satisfying all the
        # expressions (every object of the type when iFilter is NULL)
        records, names = found
        orders = _as_list(attribute_sort_order)
        if orders is not None:
            if names is None or len(orders) != len(names):  # one-to-one with iAttributeList
                return ReadDirectoryBeginResult(GenericError)
            records = _sorted(records, names, orders)
        handle = env.ids.handle()
        self._queries[handle] = _Query(records, names)
        return ReadDirectoryBeginResult(Success, handle)

    def dssm_read_directory_next(self, env: Environment,
                                 query_handle: int) -> ReadDirectoryResult:
        """[MS-MQDSSM] 3.1.6.5 Read Directory Next, as the stand-in does it: EndOfData after
        the last object; an object lacking an attribute of the list gives AttributeNotFound
        (and the enumeration moves past it)."""
        if not self.connected:
            return ReadDirectoryResult(DirectoryNotConnected)
        query = self._queries.get(query_handle)
        if query is None:
            return ReadDirectoryResult(GenericError)
        while query.next_index < len(query.records):
            record = query.records[query.next_index]
            query.next_index += 1
            if record not in self._objects.get(record.cls.__name__, []):
                continue  # deleted since Read Directory Begin
            names = query.attributes
            if names is not None and any(n not in record.attributes for n in names):
                return ReadDirectoryResult(AttributeNotFound)
            return ReadDirectoryResult(Success, self._materialize(record, names))
        return ReadDirectoryResult(EndOfData)

    def dssm_read_directory_end(self, env: Environment,
                                query_handle: int) -> DirectoryOperationResult:
        """[MS-MQDSSM] 3.1.6.6 Read Directory End, as the stand-in does it."""
        if not self.connected:
            return DirectoryNotConnected
        if self._queries.pop(query_handle, None) is None:
            return GenericError
        return Success

    def dssm_write_directory(self, env: Environment, directory_object: Any,
                             attribute_list: Any = None) -> DirectoryOperationResult:
        """[MS-MQDSSM] 3.1.6.7 Write Directory, as the stand-in does it: the listed attributes
        (all when iAttributeList is not supplied) of the object with that Identifier."""
        if not self.connected:
            return DirectoryNotConnected
        name = _type_name(directory_object)
        if name is None:
            return GenericError
        cls = DIRECTORY_OBJECT_TYPES[name]
        names = _resolve_attributes(cls, attribute_list)
        if isinstance(names, DirectoryOperationResult):
            return names
        record = self._find(directory_object.identifier, name)
        if record is None:
            return ObjectNotFound
        for attribute in names if names is not None else directory_attributes(cls):
            if attribute != "identifier":  # an Identifier does not change once assigned
                record.attributes[attribute] = copy.copy(getattr(directory_object, attribute))
        return Success

    # ------------------------------------------------------------------ internals
    def _env(self) -> Environment:
        if self.env is None:
            raise RuntimeError("this Directory is not attached to an Environment (attach(env))")
        return self.env

    def _ids(self) -> Any:
        return self._env().ids

    def _store(self, name: str, directory_object: Any, names: Any, identifier: GUID,
               queue_manager: Any) -> None:
        attributes = {"identifier": identifier}
        for attribute in names:
            if attribute != "identifier":
                attributes[attribute] = copy.copy(getattr(directory_object, attribute))
        self._objects.setdefault(name, []).append(
            _Record(DIRECTORY_OBJECT_TYPES[name], attributes, queue_manager))

    def _find(self, identifier: GUID, name: str | None = None) -> _Record | None:
        for type_name, records in self._objects.items():
            if name is not None and type_name != name:
                continue
            for record in records:
                if record.attributes["identifier"] == identifier:
                    return record
        return None

    def _select(self, directory_object_type: str, filter: Any, attribute_list: Any
                ) -> tuple[list[_Record], list[str] | None] | DirectoryOperationResult:
        cls = DIRECTORY_OBJECT_TYPES.get(directory_object_type)
        if cls is None:
            return GenericError
        resolved = _resolve_filter(cls, filter)
        if isinstance(resolved, DirectoryOperationResult):
            return resolved
        names = _resolve_attributes(cls, attribute_list)
        if isinstance(names, DirectoryOperationResult):
            return names
        records = [r for r in self._objects.get(directory_object_type, [])
                   if _satisfies(lambda n, r=r: (n in r.attributes, r.attributes.get(n)),
                                 resolved)]
        return records, names

    def _materialize(self, record: _Record, names: list[str] | None) -> DirectoryObject:
        # MS-MQDMPR/3.1.7.1.20/R4 MS-MQDMPR/3.1.7.1.21/R4: only the attributes read are set;
        # the others keep the element's defaults and are not to be used
        obj = record.cls()
        read = list(record.attributes) if names is None else names
        for attribute in read:
            setattr(obj, attribute, copy.copy(record.attributes[attribute]))
        obj._directory_attributes_read = tuple(read)
        if isinstance(obj, Queue):
            obj.queue_type = QueueType.Public  # its directory attributes are published (3.1.1.2)
            obj.queue_manager = record.queue_manager
        return obj


def _sorted(records: list[_Record], names: list[str], orders: list) -> list[_Record]:
    """3.1.7.1.21 iAttributeSortOrder: higher SortPriority takes precedence, 0 is not used;
    records lacking the attribute go last; ties keep the directory's order."""
    keys = [(priority, ascending, name) for (priority, ascending), name in zip(orders, names,
                                                                                strict=True)
            if priority]
    out = list(records)
    for _priority, ascending, name in sorted(keys, key=lambda k: k[0]):  # least precedence first
        present = [r for r in out if name in r.attributes]
        missing = [r for r in out if name not in r.attributes]
        try:
            present.sort(key=lambda r, n=name: _sort_value(r.attributes[n]),
                         reverse=not ascending)
        except TypeError:
            present.sort(key=lambda r, n=name: str(r.attributes[n]), reverse=not ascending)
        out = present + missing
    return out


#: a directory that is not there: what an Environment without ``directory`` talks to
_NO_DIRECTORY = Directory(connected=False)


def _service(env: Environment) -> Directory:
    directory = getattr(env, "directory", None)
    return directory if directory is not None else _NO_DIRECTORY


def send_change_notification(env: Environment, operation: ChangeNotificationOperation,
                             directory_object: Any) -> None:
    """[MS-MQCN] 3.3.4.1 Send Change Notification: outside the model; the Directory records
    it (an Environment without a directory drops it)."""
    directory = getattr(env, "directory", None)
    if directory is not None:
        directory.send_change_notification(operation, directory_object)


# ---------------------------------------------------------------------------------------------
# 3.1.2.1, 3.1.2.2, 3.1.2.5 Timers
# ---------------------------------------------------------------------------------------------


class _TimerKey:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


DIRECTORY_SITES_UPDATE_TIMER = _TimerKey("Directory Sites Update Timer")
DIRECTORY_SITE_GATES_UPDATE_TIMER = _TimerKey("Directory Site Gates Update Timer")
DIRECTORY_ONLINE_TIMER = _TimerKey("Directory Online Timer")


def directory_sites_update_timer_start(
        env: Environment, expiration: float = DIRECTORY_SITES_UPDATE_TIMER_DEFAULT) -> None:
    """Start (or restart) the 3.1.2.1 Directory Sites Update Timer; on expiry it generates
    Directory Sites Update (3.1.6.1). Initialization (3.1.3) starts it."""
    env.cancel_timer(DIRECTORY_SITES_UPDATE_TIMER)
    # MS-MQDMPR/3.1.2.1/R1 (the default) MS-MQDMPR/3.1.2.1/R2 (``expiration`` configures it)
    env.start_timer(expiration, lambda: directory_sites_update(env),
                    key=DIRECTORY_SITES_UPDATE_TIMER)


def directory_site_gates_update_timer_start(
        env: Environment, expiration: float = DIRECTORY_SITE_GATES_UPDATE_TIMER_DEFAULT) -> None:
    """Start (or restart) the 3.1.2.2 Directory Site Gates Update Timer; on expiry it generates
    Directory Site Gates Update (3.1.6.2). Initialization (3.1.3) starts it."""
    env.cancel_timer(DIRECTORY_SITE_GATES_UPDATE_TIMER)
    # MS-MQDMPR/3.1.2.2/R1 (the default) MS-MQDMPR/3.1.2.2/R2 (``expiration`` configures it)
    env.start_timer(expiration, lambda: directory_site_gates_update(env),
                    key=DIRECTORY_SITE_GATES_UPDATE_TIMER)


def directory_online_timer_start(env: Environment) -> None:
    """Start (or restart) the 3.1.2.5 Directory Online Timer; on expiry the queue manager
    generates Check Directory Online (3.1.7.1.25)."""
    env.cancel_timer(DIRECTORY_ONLINE_TIMER)
    env.start_timer(DIRECTORY_ONLINE_TIMER_DURATION,  # MS-MQDMPR/3.1.2.5/R1
                    lambda: check_directory_online(env), key=DIRECTORY_ONLINE_TIMER)


def directory_online_timer_active(env: Environment) -> bool:
    return env.timer_deadline(DIRECTORY_ONLINE_TIMER) is not None


# ---------------------------------------------------------------------------------------------
# 3.1.6.1 Directory Sites Update, 3.1.6.2 Directory Site Gates Update
# ---------------------------------------------------------------------------------------------

def directory_sites_update(env: Environment) -> None:
    """MS-MQDMPR 3.1.6.1 Directory Sites Update (MS-MQDMPR/3.1.6.1/R1
    MS-MQDMPR/3.1.6.1/R2)."""
    qm = env.local_queue_manager
    for site_obj in list(qm.site_collection):  # MS-MQDMPR/3.1.6.1/R3
        read = read_directory(env,  # MS-MQDMPR/3.1.6.1/R4
                              "Site",  # MS-MQDMPR/3.1.6.1/R5
                              [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.6.1/R6
                                site_obj.identifier)],  # MS-MQDMPR/3.1.6.1/R7
                              None)  # MS-MQDMPR/3.1.6.1/R8
        if read.status is Success:  # MS-MQDMPR/3.1.6.1/R9
            update_adm_attributes(site_obj, read.directory_object)  # MS-MQDMPR/3.1.6.1/R10


def directory_site_gates_update(env: Environment) -> None:
    """MS-MQDMPR 3.1.6.2 Directory Site Gates Update (MS-MQDMPR/3.1.6.2/R1
    MS-MQDMPR/3.1.6.2/R2)."""
    qm = env.local_queue_manager
    for site_obj in list(qm.site_collection):  # MS-MQDMPR/3.1.6.2/R3
        for queue_manager in list(site_obj.site_gate_collection):  # MS-MQDMPR/3.1.6.2/R4
            read = read_directory(env,  # MS-MQDMPR/3.1.6.2/R5
                                  "QueueManager",  # MS-MQDMPR/3.1.6.2/R6
                                  [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.6.2/R7
                                    queue_manager.identifier)],  # MS-MQDMPR/3.1.6.2/R8
                                  None)  # MS-MQDMPR/3.1.6.2/R9
            if read.status is Success:  # MS-MQDMPR/3.1.6.2/R10
                # MS-MQDMPR/3.1.6.2/R11
                update_adm_attributes(queue_manager, read.directory_object)


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.18 Create Directory Object, 3.1.7.1.19 Delete Directory Object
# ---------------------------------------------------------------------------------------------

def create_directory_object(env: Environment, directory_object: DirectoryObject,
                            attribute_list: Any = None) -> CreateDirectoryObjectResult:
    """MS-MQDMPR 3.1.7.1.18 Create Directory Object (MS-MQDMPR/3.1.7.1.18/R1
    MS-MQDMPR/3.1.7.1.18/R2). The catalog gives this section's steps no IDs of their own
    (they follow R2), so the lines below name the steps in words.

    ``attribute_list`` (iAttributeList): the directory attributes to publish; all when None."""
    qm = env.local_queue_manager
    # If iDirectoryObject is a Queue and its QueueType is Public:
    if isinstance(directory_object, Queue) and directory_object.queue_type is QueueType.Public:
        # Send Change Notification: iOperation := QueueCreation, iDirectoryObject
        send_change_notification(env, ChangeNotificationOperation.QueueCreation,
                                 directory_object)
    # Generate [MS-MQDSSM] 3.1.6.1 Create Directory Object with the arguments supplied
    invoked = _service(env).dssm_create_directory_object(env, directory_object, attribute_list)
    # If the invoked event's rStatus is DirectoryNotConnected:
    if invoked.status is DirectoryNotConnected:
        if qm.directory_integrated:  # DirectoryOffline stays False otherwise (see module)
            qm.directory_offline = True  # Set LocalQueueManager.DirectoryOffline to True
            if not directory_online_timer_active(env):  # Start the Directory Online Timer
                directory_online_timer_start(env)  # if it is not active already
        return CreateDirectoryObjectResult(DirectoryNotConnected)  # Set rStatus
    # Else: rStatus and rObjectGuid as the invoked event returned them
    return CreateDirectoryObjectResult(invoked.status, invoked.object_guid)


def delete_directory_object(env: Environment,
                            directory_object: DirectoryObject) -> DirectoryOperationResult:
    """MS-MQDMPR 3.1.7.1.19 Delete Directory Object (MS-MQDMPR/3.1.7.1.19/R1
    MS-MQDMPR/3.1.7.1.19/R2)."""
    qm = env.local_queue_manager
    # MS-MQDMPR/3.1.7.1.19/R3
    if isinstance(directory_object, Queue) and directory_object.queue_type is QueueType.Public:
        send_change_notification(env,  # MS-MQDMPR/3.1.7.1.19/R4
                                 # MS-MQDMPR/3.1.7.1.19/R5
                                 ChangeNotificationOperation.QueueDeletion,
                                 directory_object)  # MS-MQDMPR/3.1.7.1.19/R6
    invoked = _service(env).dssm_delete_directory_object(  # MS-MQDMPR/3.1.7.1.19/R7
        env, directory_object)
    if invoked is DirectoryNotConnected:  # MS-MQDMPR/3.1.7.1.19/R8
        # "QueueManager" here is the LocalQueueManager, as in the sibling events
        if qm.directory_integrated:  # DirectoryOffline stays False otherwise (see module)
            qm.directory_offline = True  # MS-MQDMPR/3.1.7.1.19/R9
            if not directory_online_timer_active(env):  # MS-MQDMPR/3.1.7.1.19/R10
                directory_online_timer_start(env)  # MS-MQDMPR/3.1.7.1.19/R10
        return DirectoryNotConnected  # MS-MQDMPR/3.1.7.1.19/R11
    # MS-MQDMPR/3.1.7.1.19/R12
    return invoked  # MS-MQDMPR/3.1.7.1.19/R13


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.20 Read Directory
# ---------------------------------------------------------------------------------------------

def read_directory(env: Environment, directory_object_type: str, filter: Any = None,
                   attribute_list: Any = None,
                   force_directory_read: bool = False) -> ReadDirectoryResult:
    """MS-MQDMPR 3.1.7.1.20 Read Directory (MS-MQDMPR/3.1.7.1.20/R1 MS-MQDMPR/3.1.7.1.20/R6).

    ``filter`` (iFilter): attribute-filter expressions, or None (see the module docstring);
    ``attribute_list`` (iAttributeList): the attributes to read, all when None."""
    qm = env.local_queue_manager
    if qm.directory_offline and not force_directory_read:  # MS-MQDMPR/3.1.7.1.20/R7
        if directory_object_type == "Queue":  # MS-MQDMPR/3.1.7.1.20/R8
            # MS-MQDMPR/3.1.7.1.20/R9 (the first that matches; MS-MQDMPR/3.1.7.1.20/R2
            # MS-MQDMPR/3.1.7.1.20/R3 MS-MQDMPR/3.1.7.1.20/R5)
            found = next((q for q in qm.queue_collection if matches(q, filter)), None)
            if found is None:  # MS-MQDMPR/3.1.7.1.20/R9
                # MS-MQDMPR/3.1.7.1.20/R10 MS-MQDMPR/3.1.7.1.20/R11
                return ReadDirectoryResult(ObjectNotFound)
            # MS-MQDMPR/3.1.7.1.20/R12 MS-MQDMPR/3.1.7.1.20/R13 MS-MQDMPR/3.1.7.1.20/R14
            return ReadDirectoryResult(Success, found)
        # MS-MQDMPR/3.1.7.1.20/R15
        if directory_object_type == "QueueManager" and matches(qm, filter):
            # MS-MQDMPR/3.1.7.1.20/R16 MS-MQDMPR/3.1.7.1.20/R17 MS-MQDMPR/3.1.7.1.20/R18
            return ReadDirectoryResult(Success, qm)
        # MS-MQDMPR/3.1.7.1.20/R19 MS-MQDMPR/3.1.7.1.20/R20
        return ReadDirectoryResult(DirectoryNotConnected)
    # MS-MQDMPR/3.1.7.1.20/R21
    invoked = _service(env).dssm_read_directory(  # MS-MQDMPR/3.1.7.1.20/R22
        env, directory_object_type, filter, attribute_list)
    # MS-MQDMPR/3.1.7.1.20/R23
    if invoked.status is DirectoryNotConnected and not force_directory_read:
        if qm.directory_integrated:  # DirectoryOffline stays False otherwise (see module)
            qm.directory_offline = True  # MS-MQDMPR/3.1.7.1.20/R24
            if not directory_online_timer_active(env):  # MS-MQDMPR/3.1.7.1.20/R25
                directory_online_timer_start(env)  # MS-MQDMPR/3.1.7.1.20/R25
        return ReadDirectoryResult(DirectoryNotConnected)  # MS-MQDMPR/3.1.7.1.20/R26
    # MS-MQDMPR/3.1.7.1.20/R27
    return ReadDirectoryResult(invoked.status,  # MS-MQDMPR/3.1.7.1.20/R28
                               invoked.directory_object)  # MS-MQDMPR/3.1.7.1.20/R29


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.21 Read Directory Begin, 3.1.7.1.22 Read Directory Next, 3.1.7.1.23 Read Directory End
# ---------------------------------------------------------------------------------------------

def read_directory_begin(env: Environment, directory_object_type: str, filter: Any = None,
                         attribute_list: Any = None,
                         attribute_sort_order: Any = None) -> ReadDirectoryBeginResult:
    """MS-MQDMPR 3.1.7.1.21 Read Directory Begin (MS-MQDMPR/3.1.7.1.21/R1
    MS-MQDMPR/3.1.7.1.21/R5). ``attribute_sort_order``: one (SortPriority, SortAscending) per
    entry of ``attribute_list`` (:class:`AttributeSortOrder`)."""
    return _service(env).dssm_read_directory_begin(  # MS-MQDMPR/3.1.7.1.21/R5
        env, directory_object_type, filter, attribute_list, attribute_sort_order)


def read_directory_next(env: Environment, query_handle: int) -> ReadDirectoryResult:
    """MS-MQDMPR 3.1.7.1.22 Read Directory Next (MS-MQDMPR/3.1.7.1.22/R1
    MS-MQDMPR/3.1.7.1.22/R2). EndOfData after the last object of the result set."""
    return _service(env).dssm_read_directory_next(env, query_handle)  # MS-MQDMPR/3.1.7.1.22/R2


def read_directory_end(env: Environment, query_handle: int) -> DirectoryOperationResult:
    """MS-MQDMPR 3.1.7.1.23 Read Directory End (MS-MQDMPR/3.1.7.1.23/R1
    MS-MQDMPR/3.1.7.1.23/R2)."""
    return _service(env).dssm_read_directory_end(env, query_handle)  # MS-MQDMPR/3.1.7.1.23/R2


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.24 Write Directory
# ---------------------------------------------------------------------------------------------

def write_directory(env: Environment, directory_object: DirectoryObject,
                    attribute_list: Any = None) -> DirectoryOperationResult:
    """MS-MQDMPR 3.1.7.1.24 Write Directory (MS-MQDMPR/3.1.7.1.24/R1
    MS-MQDMPR/3.1.7.1.24/R2). ``attribute_list``: the attributes to update, all when None."""
    qm = env.local_queue_manager
    invoked = _service(env).dssm_write_directory(  # MS-MQDMPR/3.1.7.1.24/R3
        env, directory_object, attribute_list)
    if invoked is DirectoryNotConnected:  # MS-MQDMPR/3.1.7.1.24/R4
        if qm.directory_integrated:  # DirectoryOffline stays False otherwise (see module)
            qm.directory_offline = True  # MS-MQDMPR/3.1.7.1.24/R5
            if not directory_online_timer_active(env):  # MS-MQDMPR/3.1.7.1.24/R6
                directory_online_timer_start(env)  # MS-MQDMPR/3.1.7.1.24/R6
        status = DirectoryNotConnected  # MS-MQDMPR/3.1.7.1.24/R7
    else:  # MS-MQDMPR/3.1.7.1.24/R8
        status = invoked  # MS-MQDMPR/3.1.7.1.24/R9
    if invoked is Success:  # MS-MQDMPR/3.1.7.1.24/R10
        # MS-MQDMPR/3.1.7.1.24/R11
        if isinstance(directory_object, Queue) and (
                directory_object.queue_type is QueueType.Public):
            send_change_notification(env,  # MS-MQDMPR/3.1.7.1.24/R12
                                     # MS-MQDMPR/3.1.7.1.24/R13
                                     ChangeNotificationOperation.QueueUpdate,
                                     directory_object)  # MS-MQDMPR/3.1.7.1.24/R14
        elif isinstance(directory_object, QueueManager):  # MS-MQDMPR/3.1.7.1.24/R15
            send_change_notification(env,  # MS-MQDMPR/3.1.7.1.24/R16
                                     # MS-MQDMPR/3.1.7.1.24/R17
                                     ChangeNotificationOperation.QueueManagerUpdate,
                                     directory_object)  # MS-MQDMPR/3.1.7.1.24/R18
    return status


# ---------------------------------------------------------------------------------------------
# 3.1.7.1.25 Check Directory Online
# ---------------------------------------------------------------------------------------------

def check_directory_online(env: Environment) -> None:
    """MS-MQDMPR 3.1.7.1.25 Check Directory Online (MS-MQDMPR/3.1.7.1.25/R1
    MS-MQDMPR/3.1.7.1.25/R2). Generated when the Directory Online Timer expires."""
    qm = env.local_queue_manager
    read = read_directory(env,  # MS-MQDMPR/3.1.7.1.25/R3
                          "QueueManager",  # MS-MQDMPR/3.1.7.1.25/R4
                          [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.25/R5
                            qm.identifier)],  # MS-MQDMPR/3.1.7.1.25/R6
                          None,  # MS-MQDMPR/3.1.7.1.25/R7
                          force_directory_read=True)  # MS-MQDMPR/3.1.7.1.25/R8
    if read.status is Success:  # MS-MQDMPR/3.1.7.1.25/R9
        update_adm_attributes(qm, read.directory_object)  # MS-MQDMPR/3.1.7.1.25/R10
        qm.directory_offline = False  # MS-MQDMPR/3.1.7.1.25/R11
        for queue in list(qm.queue_collection):  # MS-MQDMPR/3.1.7.1.25/R12
            if queue.queue_type is not QueueType.Public:  # MS-MQDMPR/3.1.7.1.25/R12
                continue
            queue_read = read_directory(env,  # MS-MQDMPR/3.1.7.1.25/R12
                                        "Queue",  # MS-MQDMPR/3.1.7.1.25/R13
                                        [("Identifier", "EQUALS",  # MS-MQDMPR/3.1.7.1.25/R14
                                          queue.identifier)],  # MS-MQDMPR/3.1.7.1.25/R15
                                        None)  # MS-MQDMPR/3.1.7.1.25/R16
            if queue_read.status is Success:  # MS-MQDMPR/3.1.7.1.25/R17
                # MS-MQDMPR/3.1.7.1.25/R18
                update_adm_attributes(queue, queue_read.directory_object)
    else:  # MS-MQDMPR/3.1.7.1.25/R19 (the else of the queue manager's read: see module)
        directory_online_timer_start(env)  # MS-MQDMPR/3.1.7.1.25/R20
