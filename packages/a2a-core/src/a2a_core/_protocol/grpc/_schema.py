"""The protobuf schema of A2A v1.0 as data: generated, do not edit.

Written by ``packages/a2a-core/proto/generate.py`` from ``a2a.proto`` and
``wellknown.proto`` beside it. A field is ``(number, json_name, kind, label, ref)``:
``kind`` is a scalar (``string``, ``bytes``, ``bool``, ``int32``, ``int64``,
``double``), ``enum``, ``message``, or a well-known message read as JSON (``struct``,
``value``, ``timestamp``); ``label`` is 0 (singular), 1 (explicit presence: ``optional``
or a oneof member), 2 (repeated) or 3 (``map<string, kind>``); ``ref`` names the enum
or message. An enum is its value names in number order.
"""

from typing import Final

Field = tuple[int, str, str, int, str]

PACKAGE: Final = "lf.a2a.v1"

MESSAGES: Final[dict[str, tuple[Field, ...]]] = {
    "SendMessageConfiguration": (
        (1, "acceptedOutputModes", "string", 2, ""),
        (2, "taskPushNotificationConfig", "message", 0, "TaskPushNotificationConfig"),
        (3, "historyLength", "int32", 1, ""),
        (4, "returnImmediately", "bool", 0, ""),
    ),
    "Task": (
        (1, "id", "string", 0, ""),
        (2, "contextId", "string", 0, ""),
        (3, "status", "message", 0, "TaskStatus"),
        (4, "artifacts", "message", 2, "Artifact"),
        (5, "history", "message", 2, "Message"),
        (6, "metadata", "struct", 0, ""),
    ),
    "TaskStatus": (
        (1, "state", "enum", 0, "TaskState"),
        (2, "message", "message", 0, "Message"),
        (3, "timestamp", "timestamp", 0, ""),
    ),
    "Part": (
        (1, "text", "string", 1, ""),
        (2, "raw", "bytes", 1, ""),
        (3, "url", "string", 1, ""),
        (4, "data", "value", 1, ""),
        (5, "metadata", "struct", 0, ""),
        (6, "filename", "string", 0, ""),
        (7, "mediaType", "string", 0, ""),
    ),
    "Message": (
        (1, "messageId", "string", 0, ""),
        (2, "contextId", "string", 0, ""),
        (3, "taskId", "string", 0, ""),
        (4, "role", "enum", 0, "Role"),
        (5, "parts", "message", 2, "Part"),
        (6, "metadata", "struct", 0, ""),
        (7, "extensions", "string", 2, ""),
        (8, "referenceTaskIds", "string", 2, ""),
    ),
    "Artifact": (
        (1, "artifactId", "string", 0, ""),
        (2, "name", "string", 0, ""),
        (3, "description", "string", 0, ""),
        (4, "parts", "message", 2, "Part"),
        (5, "metadata", "struct", 0, ""),
        (6, "extensions", "string", 2, ""),
    ),
    "TaskStatusUpdateEvent": (
        (1, "taskId", "string", 0, ""),
        (2, "contextId", "string", 0, ""),
        (3, "status", "message", 0, "TaskStatus"),
        (4, "metadata", "struct", 0, ""),
    ),
    "TaskArtifactUpdateEvent": (
        (1, "taskId", "string", 0, ""),
        (2, "contextId", "string", 0, ""),
        (3, "artifact", "message", 0, "Artifact"),
        (4, "append", "bool", 0, ""),
        (5, "lastChunk", "bool", 0, ""),
        (6, "metadata", "struct", 0, ""),
    ),
    "AuthenticationInfo": (
        (1, "scheme", "string", 0, ""),
        (2, "credentials", "string", 0, ""),
    ),
    "AgentInterface": (
        (1, "url", "string", 0, ""),
        (2, "protocolBinding", "string", 0, ""),
        (3, "tenant", "string", 0, ""),
        (4, "protocolVersion", "string", 0, ""),
    ),
    "AgentCard": (
        (1, "name", "string", 0, ""),
        (2, "description", "string", 0, ""),
        (3, "supportedInterfaces", "message", 2, "AgentInterface"),
        (4, "provider", "message", 0, "AgentProvider"),
        (5, "version", "string", 0, ""),
        (6, "documentationUrl", "string", 1, ""),
        (7, "capabilities", "message", 0, "AgentCapabilities"),
        (8, "securitySchemes", "message", 3, "SecurityScheme"),
        (9, "securityRequirements", "message", 2, "SecurityRequirement"),
        (10, "defaultInputModes", "string", 2, ""),
        (11, "defaultOutputModes", "string", 2, ""),
        (12, "skills", "message", 2, "AgentSkill"),
        (13, "signatures", "message", 2, "AgentCardSignature"),
        (14, "iconUrl", "string", 1, ""),
    ),
    "AgentProvider": (
        (1, "url", "string", 0, ""),
        (2, "organization", "string", 0, ""),
    ),
    "AgentCapabilities": (
        (1, "streaming", "bool", 1, ""),
        (2, "pushNotifications", "bool", 1, ""),
        (3, "extensions", "message", 2, "AgentExtension"),
        (4, "extendedAgentCard", "bool", 1, ""),
    ),
    "AgentExtension": (
        (1, "uri", "string", 0, ""),
        (2, "description", "string", 0, ""),
        (3, "required", "bool", 0, ""),
        (4, "params", "struct", 0, ""),
    ),
    "AgentSkill": (
        (1, "id", "string", 0, ""),
        (2, "name", "string", 0, ""),
        (3, "description", "string", 0, ""),
        (4, "tags", "string", 2, ""),
        (5, "examples", "string", 2, ""),
        (6, "inputModes", "string", 2, ""),
        (7, "outputModes", "string", 2, ""),
        (8, "securityRequirements", "message", 2, "SecurityRequirement"),
    ),
    "AgentCardSignature": (
        (1, "protected", "string", 0, ""),
        (2, "signature", "string", 0, ""),
        (3, "header", "struct", 0, ""),
    ),
    "TaskPushNotificationConfig": (
        (1, "tenant", "string", 0, ""),
        (2, "id", "string", 0, ""),
        (3, "taskId", "string", 0, ""),
        (4, "url", "string", 0, ""),
        (5, "token", "string", 0, ""),
        (6, "authentication", "message", 0, "AuthenticationInfo"),
    ),
    "StringList": (
        (1, "list", "string", 2, ""),
    ),
    "SecurityRequirement": (
        (1, "schemes", "message", 3, "StringList"),
    ),
    "SecurityScheme": (
        (1, "apiKeySecurityScheme", "message", 1, "APIKeySecurityScheme"),
        (2, "httpAuthSecurityScheme", "message", 1, "HTTPAuthSecurityScheme"),
        (3, "oauth2SecurityScheme", "message", 1, "OAuth2SecurityScheme"),
        (4, "openIdConnectSecurityScheme", "message", 1, "OpenIdConnectSecurityScheme"),
        (5, "mtlsSecurityScheme", "message", 1, "MutualTlsSecurityScheme"),
    ),
    "APIKeySecurityScheme": (
        (1, "description", "string", 0, ""),
        (2, "location", "string", 0, ""),
        (3, "name", "string", 0, ""),
    ),
    "HTTPAuthSecurityScheme": (
        (1, "description", "string", 0, ""),
        (2, "scheme", "string", 0, ""),
        (3, "bearerFormat", "string", 0, ""),
    ),
    "OAuth2SecurityScheme": (
        (1, "description", "string", 0, ""),
        (2, "flows", "message", 0, "OAuthFlows"),
        (3, "oauth2MetadataUrl", "string", 0, ""),
    ),
    "OpenIdConnectSecurityScheme": (
        (1, "description", "string", 0, ""),
        (2, "openIdConnectUrl", "string", 0, ""),
    ),
    "MutualTlsSecurityScheme": (
        (1, "description", "string", 0, ""),
    ),
    "OAuthFlows": (
        (1, "authorizationCode", "message", 1, "AuthorizationCodeOAuthFlow"),
        (2, "clientCredentials", "message", 1, "ClientCredentialsOAuthFlow"),
        (3, "implicit", "message", 1, "ImplicitOAuthFlow"),
        (4, "password", "message", 1, "PasswordOAuthFlow"),
        (5, "deviceCode", "message", 1, "DeviceCodeOAuthFlow"),
    ),
    "AuthorizationCodeOAuthFlow": (
        (1, "authorizationUrl", "string", 0, ""),
        (2, "tokenUrl", "string", 0, ""),
        (3, "refreshUrl", "string", 0, ""),
        (4, "scopes", "string", 3, ""),
        (5, "pkceRequired", "bool", 0, ""),
    ),
    "ClientCredentialsOAuthFlow": (
        (1, "tokenUrl", "string", 0, ""),
        (2, "refreshUrl", "string", 0, ""),
        (3, "scopes", "string", 3, ""),
    ),
    "ImplicitOAuthFlow": (
        (1, "authorizationUrl", "string", 0, ""),
        (2, "refreshUrl", "string", 0, ""),
        (3, "scopes", "string", 3, ""),
    ),
    "PasswordOAuthFlow": (
        (1, "tokenUrl", "string", 0, ""),
        (2, "refreshUrl", "string", 0, ""),
        (3, "scopes", "string", 3, ""),
    ),
    "DeviceCodeOAuthFlow": (
        (1, "deviceAuthorizationUrl", "string", 0, ""),
        (2, "tokenUrl", "string", 0, ""),
        (3, "refreshUrl", "string", 0, ""),
        (4, "scopes", "string", 3, ""),
    ),
    "SendMessageRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "message", "message", 0, "Message"),
        (3, "configuration", "message", 0, "SendMessageConfiguration"),
        (4, "metadata", "struct", 0, ""),
    ),
    "GetTaskRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "id", "string", 0, ""),
        (3, "historyLength", "int32", 1, ""),
    ),
    "ListTasksRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "contextId", "string", 0, ""),
        (3, "status", "enum", 0, "TaskState"),
        (4, "pageSize", "int32", 1, ""),
        (5, "pageToken", "string", 0, ""),
        (6, "historyLength", "int32", 1, ""),
        (7, "statusTimestampAfter", "timestamp", 0, ""),
        (8, "includeArtifacts", "bool", 1, ""),
    ),
    "ListTasksResponse": (
        (1, "tasks", "message", 2, "Task"),
        (2, "nextPageToken", "string", 0, ""),
        (3, "pageSize", "int32", 0, ""),
        (4, "totalSize", "int32", 0, ""),
    ),
    "CancelTaskRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "id", "string", 0, ""),
        (3, "metadata", "struct", 0, ""),
    ),
    "GetTaskPushNotificationConfigRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "taskId", "string", 0, ""),
        (3, "id", "string", 0, ""),
    ),
    "DeleteTaskPushNotificationConfigRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "taskId", "string", 0, ""),
        (3, "id", "string", 0, ""),
    ),
    "SubscribeToTaskRequest": (
        (1, "tenant", "string", 0, ""),
        (2, "id", "string", 0, ""),
    ),
    "ListTaskPushNotificationConfigsRequest": (
        (1, "taskId", "string", 0, ""),
        (2, "pageSize", "int32", 0, ""),
        (3, "pageToken", "string", 0, ""),
        (4, "tenant", "string", 0, ""),
    ),
    "GetExtendedAgentCardRequest": (
        (1, "tenant", "string", 0, ""),
    ),
    "SendMessageResponse": (
        (1, "task", "message", 1, "Task"),
        (2, "message", "message", 1, "Message"),
    ),
    "StreamResponse": (
        (1, "task", "message", 1, "Task"),
        (2, "message", "message", 1, "Message"),
        (3, "statusUpdate", "message", 1, "TaskStatusUpdateEvent"),
        (4, "artifactUpdate", "message", 1, "TaskArtifactUpdateEvent"),
    ),
    "ListTaskPushNotificationConfigsResponse": (
        (1, "configs", "message", 2, "TaskPushNotificationConfig"),
        (2, "nextPageToken", "string", 0, ""),
    ),
    "Struct": (
        (1, "fields", "message", 3, "Value"),
    ),
    "Value": (
        (1, "nullValue", "enum", 1, "NullValue"),
        (2, "numberValue", "double", 1, ""),
        (3, "stringValue", "string", 1, ""),
        (4, "boolValue", "bool", 1, ""),
        (5, "structValue", "message", 1, "Struct"),
        (6, "listValue", "message", 1, "ListValue"),
    ),
    "ListValue": (
        (1, "values", "message", 2, "Value"),
    ),
    "Timestamp": (
        (1, "seconds", "int64", 0, ""),
        (2, "nanos", "int32", 0, ""),
    ),
    "Empty": (
    ),
    "Any": (
        (1, "typeUrl", "string", 0, ""),
        (2, "value", "bytes", 0, ""),
    ),
    "Status": (
        (1, "code", "int32", 0, ""),
        (2, "message", "string", 0, ""),
        (3, "details", "message", 2, "Any"),
    ),
    "ErrorInfo": (
        (1, "reason", "string", 0, ""),
        (2, "domain", "string", 0, ""),
        (3, "metadata", "string", 3, ""),
    ),
    "BadRequest": (
        (1, "fieldViolations", "message", 2, "FieldViolation"),
    ),
    "FieldViolation": (
        (1, "field", "string", 0, ""),
        (2, "description", "string", 0, ""),
        (3, "reason", "string", 0, ""),
    ),
}

ENUMS: Final[dict[str, tuple[str, ...]]] = {
    "TaskState": (
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    ),
    "Role": (
        "ROLE_UNSPECIFIED",
        "ROLE_USER",
        "ROLE_AGENT",
    ),
    "NullValue": (
        "NULL_VALUE",
    ),
}

#: ``(rpc, request, response, server streaming)``, in proto order.
RPCS: Final[tuple[tuple[str, str, str, bool], ...]] = (
    ("SendMessage", "SendMessageRequest", "SendMessageResponse", False),
    ("SendStreamingMessage", "SendMessageRequest", "StreamResponse", True),
    ("GetTask", "GetTaskRequest", "Task", False),
    ("ListTasks", "ListTasksRequest", "ListTasksResponse", False),
    ("CancelTask", "CancelTaskRequest", "Task", False),
    ("SubscribeToTask", "SubscribeToTaskRequest", "StreamResponse", True),
    ("CreateTaskPushNotificationConfig", "TaskPushNotificationConfig", "TaskPushNotificationConfig", False),
    ("GetTaskPushNotificationConfig", "GetTaskPushNotificationConfigRequest", "TaskPushNotificationConfig", False),
    ("ListTaskPushNotificationConfigs", "ListTaskPushNotificationConfigsRequest", "ListTaskPushNotificationConfigsResponse", False),
    ("GetExtendedAgentCard", "GetExtendedAgentCardRequest", "AgentCard", False),
    ("DeleteTaskPushNotificationConfig", "DeleteTaskPushNotificationConfigRequest", "Empty", False),
)
