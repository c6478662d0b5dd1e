from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ELEMENT_OPERATION_INSERT: ElementOperation
ELEMENT_OPERATION_MOVE: ElementOperation
ELEMENT_OPERATION_REMOVE: ElementOperation
ELEMENT_OPERATION_REPLACE: ElementOperation
ERROR_CODE_ACTION_FAILED: ErrorCode
ERROR_CODE_BAD_REQUEST: ErrorCode
ERROR_CODE_FORBIDDEN: ErrorCode
ERROR_CODE_INTERRUPTED: ErrorCode
ERROR_CODE_INVALID_PATH: ErrorCode
ERROR_CODE_NOT_JOINED: ErrorCode
ERROR_CODE_NOT_LEADER: ErrorCode
ERROR_CODE_OVERLOADED: ErrorCode
ERROR_CODE_PERSISTENCE_FAILED: ErrorCode
ERROR_CODE_READ_ONLY: ErrorCode
ERROR_CODE_TOO_LARGE: ErrorCode
ERROR_CODE_TYPE_MISMATCH: ErrorCode
ERROR_CODE_UNKNOWN_ACTION: ErrorCode
ERROR_CODE_UNKNOWN_OBJECT: ErrorCode
ERROR_CODE_UNKNOWN_PROPERTY: ErrorCode
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_UNSUPPORTED_VERSION: ErrorCode
ERROR_CODE_VALIDATION_FAILED: ErrorCode
ERROR_CODE_VERSION_CONFLICT: ErrorCode
ERROR_CODE_VIEW_ID_IN_USE: ErrorCode
NULL_VALUE: NullValue
VALUE_KIND_ANY: ValueKind
VALUE_KIND_BOOL: ValueKind
VALUE_KIND_BYTES: ValueKind
VALUE_KIND_DOUBLE: ValueKind
VALUE_KIND_INT: ValueKind
VALUE_KIND_LIST: ValueKind
VALUE_KIND_MAP: ValueKind
VALUE_KIND_NULL: ValueKind
VALUE_KIND_STRING: ValueKind

class ActionParameter(_message.Message):
    __slots__ = ["kind", "label", "type_name"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
    kind: ValueKind
    label: str
    type_name: str
    def __init__(self, label: _Optional[str] = ..., kind: _Optional[_Union[ValueKind, str]] = ..., type_name: _Optional[str] = ...) -> None: ...

class ActionSchema(_message.Message):
    __slots__ = ["name", "parameters", "result_kind", "result_type_name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    RESULT_KIND_FIELD_NUMBER: _ClassVar[int]
    RESULT_TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    parameters: _containers.RepeatedCompositeFieldContainer[ActionParameter]
    result_kind: ValueKind
    result_type_name: str
    def __init__(self, name: _Optional[str] = ..., parameters: _Optional[_Iterable[_Union[ActionParameter, _Mapping]]] = ..., result_kind: _Optional[_Union[ValueKind, str]] = ..., result_type_name: _Optional[str] = ...) -> None: ...

class CallReply(_message.Message):
    __slots__ = ["call_id", "error", "ok", "result", "sequence"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    error: Error
    ok: bool
    result: Value
    sequence: int
    def __init__(self, call_id: _Optional[int] = ..., ok: bool = ..., result: _Optional[_Union[Value, _Mapping]] = ..., sequence: _Optional[int] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class CallRequest(_message.Message):
    __slots__ = ["action", "arguments", "call_id", "object", "view_id"]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    action: str
    arguments: _containers.RepeatedCompositeFieldContainer[Value]
    call_id: int
    object: str
    view_id: str
    def __init__(self, object: _Optional[str] = ..., action: _Optional[str] = ..., arguments: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., view_id: _Optional[str] = ..., call_id: _Optional[int] = ...) -> None: ...

class Change(_message.Message):
    __slots__ = ["expected_version", "operation", "path", "position", "property", "value"]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    PROPERTY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    expected_version: int
    operation: ElementOperation
    path: _containers.RepeatedCompositeFieldContainer[PathComponent]
    position: int
    property: str
    value: Value
    def __init__(self, property: _Optional[str] = ..., path: _Optional[_Iterable[_Union[PathComponent, _Mapping]]] = ..., value: _Optional[_Union[Value, _Mapping]] = ..., expected_version: _Optional[int] = ..., operation: _Optional[_Union[ElementOperation, str]] = ..., position: _Optional[int] = ...) -> None: ...

class ConnectedView(_message.Message):
    __slots__ = ["connected_ms", "key_name", "node_name", "relay", "silent_ms", "view_id"]
    CONNECTED_MS_FIELD_NUMBER: _ClassVar[int]
    KEY_NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    RELAY_FIELD_NUMBER: _ClassVar[int]
    SILENT_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    connected_ms: int
    key_name: str
    node_name: str
    relay: bool
    silent_ms: int
    view_id: str
    def __init__(self, view_id: _Optional[str] = ..., node_name: _Optional[str] = ..., relay: bool = ..., connected_ms: _Optional[int] = ..., silent_ms: _Optional[int] = ..., key_name: _Optional[str] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ["code", "leader_control", "message", "object", "property"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_CONTROL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    PROPERTY_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    leader_control: str
    message: str
    object: str
    property: str
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., message: _Optional[str] = ..., object: _Optional[str] = ..., property: _Optional[str] = ..., leader_control: _Optional[str] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ["view_id"]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    view_id: str
    def __init__(self, view_id: _Optional[str] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ["epoch", "sequences"]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    sequences: _containers.RepeatedCompositeFieldContainer[ObjectSequence]
    def __init__(self, epoch: _Optional[int] = ..., sequences: _Optional[_Iterable[_Union[ObjectSequence, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ["confirms_by_echo", "node_name", "objects", "relay", "schema_hash", "session_token", "view_id"]
    CONFIRMS_BY_ECHO_FIELD_NUMBER: _ClassVar[int]
    NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    RELAY_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_HASH_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    confirms_by_echo: bool
    node_name: str
    objects: _containers.RepeatedScalarFieldContainer[str]
    relay: bool
    schema_hash: int
    session_token: bytes
    view_id: str
    def __init__(self, view_id: _Optional[str] = ..., node_name: _Optional[str] = ..., objects: _Optional[_Iterable[str]] = ..., session_token: _Optional[bytes] = ..., relay: bool = ..., schema_hash: _Optional[int] = ..., confirms_by_echo: bool = ...) -> None: ...

class JoinMarker(_message.Message):
    __slots__ = ["epoch", "view_id"]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    view_id: str
    def __init__(self, view_id: _Optional[str] = ..., epoch: _Optional[int] = ...) -> None: ...

class ListValue(_message.Message):
    __slots__ = ["items"]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, items: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class MapValue(_message.Message):
    __slots__ = ["entries"]
    class EntriesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Value
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.MessageMap[str, Value]
    def __init__(self, entries: _Optional[_Mapping[str, Value]] = ...) -> None: ...

class ObjectSchema(_message.Message):
    __slots__ = ["actions", "name", "properties", "property_table"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    PROPERTY_TABLE_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[ActionSchema]
    name: str
    properties: _containers.RepeatedCompositeFieldContainer[PropertySchema]
    property_table: PropertyTable
    def __init__(self, name: _Optional[str] = ..., properties: _Optional[_Iterable[_Union[PropertySchema, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[ActionSchema, _Mapping]]] = ..., property_table: _Optional[_Union[PropertyTable, _Mapping]] = ...) -> None: ...

class ObjectSequence(_message.Message):
    __slots__ = ["object", "sequence"]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    object: str
    sequence: int
    def __init__(self, object: _Optional[str] = ..., sequence: _Optional[int] = ...) -> None: ...

class PathComponent(_message.Message):
    __slots__ = ["id", "index", "key"]
    ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    id: Value
    index: int
    key: str
    def __init__(self, key: _Optional[str] = ..., index: _Optional[int] = ..., id: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...

class PathedChange(_message.Message):
    __slots__ = ["operation", "path", "position", "value"]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    operation: ElementOperation
    path: _containers.RepeatedCompositeFieldContainer[PathComponent]
    position: int
    value: Value
    def __init__(self, path: _Optional[_Iterable[_Union[PathComponent, _Mapping]]] = ..., value: _Optional[_Union[Value, _Mapping]] = ..., operation: _Optional[_Union[ElementOperation, str]] = ..., position: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Pong(_message.Message):
    __slots__ = ["epoch"]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    def __init__(self, epoch: _Optional[int] = ...) -> None: ...

class PropertySchema(_message.Message):
    __slots__ = ["kind", "name", "optional", "persisted", "type_name", "writable"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONAL_FIELD_NUMBER: _ClassVar[int]
    PERSISTED_FIELD_NUMBER: _ClassVar[int]
    TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
    WRITABLE_FIELD_NUMBER: _ClassVar[int]
    kind: ValueKind
    name: str
    optional: bool
    persisted: bool
    type_name: str
    writable: bool
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[ValueKind, str]] = ..., type_name: _Optional[str] = ..., writable: bool = ..., persisted: bool = ..., optional: bool = ...) -> None: ...

class PropertyState(_message.Message):
    __slots__ = ["name", "value", "version"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: Value
    version: int
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class PropertyTable(_message.Message):
    __slots__ = ["flags", "kinds", "names", "type_names", "types"]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TYPE_NAMES_FIELD_NUMBER: _ClassVar[int]
    flags: _containers.RepeatedScalarFieldContainer[int]
    kinds: _containers.RepeatedScalarFieldContainer[ValueKind]
    names: _containers.RepeatedScalarFieldContainer[str]
    type_names: _containers.RepeatedScalarFieldContainer[str]
    types: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, names: _Optional[_Iterable[str]] = ..., kinds: _Optional[_Iterable[_Union[ValueKind, str]]] = ..., flags: _Optional[_Iterable[int]] = ..., type_names: _Optional[_Iterable[str]] = ..., types: _Optional[_Iterable[int]] = ...) -> None: ...

class Publication(_message.Message):
    __slots__ = ["heartbeat", "join_marker", "protocol_version", "run", "updates"]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    JOIN_MARKER_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    heartbeat: Heartbeat
    join_marker: JoinMarker
    protocol_version: int
    run: UpdateRun
    updates: _containers.RepeatedCompositeFieldContainer[UpdateBatch]
    def __init__(self, protocol_version: _Optional[int] = ..., updates: _Optional[_Iterable[_Union[UpdateBatch, _Mapping]]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., join_marker: _Optional[_Union[JoinMarker, _Mapping]] = ..., run: _Optional[_Union[UpdateRun, _Mapping]] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ["call_reply", "error", "pong", "protocol_version", "request_id", "snapshot_chunk", "snapshot_part", "view_list", "welcome", "write_reply"]
    CALL_REPLY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_CHUNK_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_PART_FIELD_NUMBER: _ClassVar[int]
    VIEW_LIST_FIELD_NUMBER: _ClassVar[int]
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    WRITE_REPLY_FIELD_NUMBER: _ClassVar[int]
    call_reply: CallReply
    error: Error
    pong: Pong
    protocol_version: int
    request_id: int
    snapshot_chunk: SnapshotChunk
    snapshot_part: SnapshotPart
    view_list: ViewList
    welcome: Welcome
    write_reply: WriteReply
    def __init__(self, protocol_version: _Optional[int] = ..., request_id: _Optional[int] = ..., welcome: _Optional[_Union[Welcome, _Mapping]] = ..., snapshot_chunk: _Optional[_Union[SnapshotChunk, _Mapping]] = ..., write_reply: _Optional[_Union[WriteReply, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., call_reply: _Optional[_Union[CallReply, _Mapping]] = ..., view_list: _Optional[_Union[ViewList, _Mapping]] = ..., snapshot_part: _Optional[_Union[SnapshotPart, _Mapping]] = ...) -> None: ...

class Request(_message.Message):
    __slots__ = ["call", "goodbye", "hello", "ping", "protocol_version", "request_id", "snapshot", "views", "write"]
    CALL_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    WRITE_FIELD_NUMBER: _ClassVar[int]
    call: CallRequest
    goodbye: Goodbye
    hello: Hello
    ping: Ping
    protocol_version: int
    request_id: int
    snapshot: SnapshotRequest
    views: ViewsRequest
    write: WriteRequest
    def __init__(self, protocol_version: _Optional[int] = ..., request_id: _Optional[int] = ..., hello: _Optional[_Union[Hello, _Mapping]] = ..., snapshot: _Optional[_Union[SnapshotRequest, _Mapping]] = ..., write: _Optional[_Union[WriteRequest, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., call: _Optional[_Union[CallRequest, _Mapping]] = ..., views: _Optional[_Union[ViewsRequest, _Mapping]] = ...) -> None: ...

class SnapshotChunk(_message.Message):
    __slots__ = ["chunk_index", "epoch", "last", "object", "properties", "sequence"]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    chunk_index: int
    epoch: int
    last: bool
    object: str
    properties: _containers.RepeatedCompositeFieldContainer[PropertyState]
    sequence: int
    def __init__(self, object: _Optional[str] = ..., epoch: _Optional[int] = ..., sequence: _Optional[int] = ..., chunk_index: _Optional[int] = ..., last: bool = ..., properties: _Optional[_Iterable[_Union[PropertyState, _Mapping]]] = ...) -> None: ...

class SnapshotPart(_message.Message):
    __slots__ = ["blobs", "cells", "doubles", "epoch", "ints", "last", "object", "part", "sequence", "strings", "values", "versions"]
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    DOUBLES_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    INTS_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    PART_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STRINGS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    blobs: _containers.RepeatedScalarFieldContainer[bytes]
    cells: _containers.RepeatedScalarFieldContainer[int]
    doubles: _containers.RepeatedScalarFieldContainer[float]
    epoch: int
    ints: _containers.RepeatedScalarFieldContainer[int]
    last: bool
    object: int
    part: int
    sequence: int
    strings: _containers.RepeatedScalarFieldContainer[str]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    versions: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, object: _Optional[int] = ..., epoch: _Optional[int] = ..., sequence: _Optional[int] = ..., part: _Optional[int] = ..., last: bool = ..., cells: _Optional[_Iterable[int]] = ..., ints: _Optional[_Iterable[int]] = ..., doubles: _Optional[_Iterable[float]] = ..., strings: _Optional[_Iterable[str]] = ..., blobs: _Optional[_Iterable[bytes]] = ..., values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., versions: _Optional[_Iterable[int]] = ...) -> None: ...

class SnapshotRequest(_message.Message):
    __slots__ = ["object"]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    object: str
    def __init__(self, object: _Optional[str] = ...) -> None: ...

class UpdateBatch(_message.Message):
    __slots__ = ["changes", "epoch", "object", "origin", "sequence", "write_id"]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    epoch: int
    object: str
    origin: str
    sequence: int
    write_id: int
    def __init__(self, object: _Optional[str] = ..., epoch: _Optional[int] = ..., sequence: _Optional[int] = ..., origin: _Optional[str] = ..., write_id: _Optional[int] = ..., changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ...) -> None: ...

class UpdateRun(_message.Message):
    __slots__ = ["batch_changes", "batches", "blobs", "cells", "doubles", "epoch", "first_sequence", "ints", "object", "origin_batches", "origins", "pathed", "strings", "values", "write_ids"]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    BATCH_CHANGES_FIELD_NUMBER: _ClassVar[int]
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    DOUBLES_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    INTS_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    ORIGINS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_BATCHES_FIELD_NUMBER: _ClassVar[int]
    PATHED_FIELD_NUMBER: _ClassVar[int]
    STRINGS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    WRITE_IDS_FIELD_NUMBER: _ClassVar[int]
    batch_changes: _containers.RepeatedScalarFieldContainer[int]
    batches: int
    blobs: _containers.RepeatedScalarFieldContainer[bytes]
    cells: _containers.RepeatedScalarFieldContainer[int]
    doubles: _containers.RepeatedScalarFieldContainer[float]
    epoch: int
    first_sequence: int
    ints: _containers.RepeatedScalarFieldContainer[int]
    object: int
    origin_batches: _containers.RepeatedScalarFieldContainer[int]
    origins: _containers.RepeatedScalarFieldContainer[str]
    pathed: _containers.RepeatedCompositeFieldContainer[PathedChange]
    strings: _containers.RepeatedScalarFieldContainer[str]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    write_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, object: _Optional[int] = ..., epoch: _Optional[int] = ..., first_sequence: _Optional[int] = ..., batches: _Optional[int] = ..., batch_changes: _Optional[_Iterable[int]] = ..., cells: _Optional[_Iterable[int]] = ..., ints: _Optional[_Iterable[int]] = ..., doubles: _Optional[_Iterable[float]] = ..., strings: _Optional[_Iterable[str]] = ..., blobs: _Optional[_Iterable[bytes]] = ..., values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ..., pathed: _Optional[_Iterable[_Union[PathedChange, _Mapping]]] = ..., origin_batches: _Optional[_Iterable[int]] = ..., origins: _Optional[_Iterable[str]] = ..., write_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class Value(_message.Message):
    __slots__ = ["bool_value", "bytes_value", "double_value", "int_value", "list_value", "map_value", "null_value", "string_value"]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    LIST_VALUE_FIELD_NUMBER: _ClassVar[int]
    MAP_VALUE_FIELD_NUMBER: _ClassVar[int]
    NULL_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    bool_value: bool
    bytes_value: bytes
    double_value: float
    int_value: int
    list_value: ListValue
    map_value: MapValue
    null_value: NullValue
    string_value: str
    def __init__(self, null_value: _Optional[_Union[NullValue, str]] = ..., bool_value: bool = ..., int_value: _Optional[int] = ..., double_value: _Optional[float] = ..., string_value: _Optional[str] = ..., bytes_value: _Optional[bytes] = ..., list_value: _Optional[_Union[ListValue, _Mapping]] = ..., map_value: _Optional[_Union[MapValue, _Mapping]] = ...) -> None: ...

class ViewList(_message.Message):
    __slots__ = ["omitted", "views"]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    omitted: int
    views: _containers.RepeatedCompositeFieldContainer[ConnectedView]
    def __init__(self, views: _Optional[_Iterable[_Union[ConnectedView, _Mapping]]] = ..., omitted: _Optional[int] = ...) -> None: ...

class ViewsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Welcome(_message.Message):
    __slots__ = ["confirms_by_echo", "epoch", "heartbeat_interval_ms", "host_name", "max_message_bytes", "objects", "schema_hash", "session_token", "updates_endpoint"]
    CONFIRMS_BY_ECHO_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    HOST_NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_HASH_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    UPDATES_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    confirms_by_echo: bool
    epoch: int
    heartbeat_interval_ms: int
    host_name: str
    max_message_bytes: int
    objects: _containers.RepeatedCompositeFieldContainer[ObjectSchema]
    schema_hash: int
    session_token: bytes
    updates_endpoint: str
    def __init__(self, epoch: _Optional[int] = ..., updates_endpoint: _Optional[str] = ..., host_name: _Optional[str] = ..., objects: _Optional[_Iterable[_Union[ObjectSchema, _Mapping]]] = ..., heartbeat_interval_ms: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., session_token: _Optional[bytes] = ..., schema_hash: _Optional[int] = ..., confirms_by_echo: bool = ...) -> None: ...

class WriteReply(_message.Message):
    __slots__ = ["accepted", "rejection", "sequence", "write_id"]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    accepted: bool
    rejection: Error
    sequence: int
    write_id: int
    def __init__(self, write_id: _Optional[int] = ..., accepted: bool = ..., sequence: _Optional[int] = ..., rejection: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ["changes", "object", "view_id", "write_id"]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    object: str
    view_id: str
    write_id: int
    def __init__(self, object: _Optional[str] = ..., write_id: _Optional[int] = ..., changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ..., view_id: _Optional[str] = ...) -> None: ...

class NullValue(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ValueKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ElementOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
