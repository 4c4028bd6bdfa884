"""The protobuf schema of A2A v1.0 as data: generated, do not edit.

Written by ``packages/a2a-core/proto/generate.py`` from ``a2a.proto`` and
``wellknown.proto`` beside it. A field is ``(number, json_name, kind, label, ref, name,
oneof)``:
``kind`` is a scalar (``string``, ``bytes``, ``bool``, ``int32``, ``int64``,
``double``), ``enum``, ``message``, or a well-known message read as JSON (``struct``,
``value``, ``timestamp``); ``label`` is 0 (singular), 1 (explicit presence: ``optional``
or a oneof member), 2 (repeated) or 3 (``map<string, kind>``); ``ref`` names the enum
or message; ``name`` is the proto field name, ``oneof`` its oneof group (``""``: none).
An enum is its value names in number order.
"""

from typing import Final

Field = tuple[int, str, str, int, str, str, str]

PACKAGE: Final = "lf.a2a.v1"

MESSAGES: Final[dict[str, tuple[Field, ...]]] = {
    "SendMessageConfiguration": (
        (1, "acceptedOutputModes", "string", 2, "", "accepted_output_modes", ""),
        (2, "taskPushNotificationConfig", "message", 0, "TaskPushNotificationConfig", "task_push_notification_config", ""),
        (3, "historyLength", "int32", 1, "", "history_length", ""),
        (4, "returnImmediately", "bool", 0, "", "return_immediately", ""),
    ),
    "Task": (
        (1, "id", "string", 0, "", "id", ""),
        (2, "contextId", "string", 0, "", "context_id", ""),
        (3, "status", "message", 0, "TaskStatus", "status", ""),
        (4, "artifacts", "message", 2, "Artifact", "artifacts", ""),
        (5, "history", "message", 2, "Message", "history", ""),
        (6, "metadata", "struct", 0, "", "metadata", ""),
    ),
    "TaskStatus": (
        (1, "state", "enum", 0, "TaskState", "state", ""),
        (2, "message", "message", 0, "Message", "message", ""),
        (3, "timestamp", "timestamp", 0, "", "timestamp", ""),
    ),
    "Part": (
        (1, "text", "string", 1, "", "text", "content"),
        (2, "raw", "bytes", 1, "", "raw", "content"),
        (3, "url", "string", 1, "", "url", "content"),
        (4, "data", "value", 1, "", "data", "content"),
        (5, "metadata", "struct", 0, "", "metadata", ""),
        (6, "filename", "string", 0, "", "filename", ""),
        (7, "mediaType", "string", 0, "", "media_type", ""),
    ),
    "Message": (
        (1, "messageId", "string", 0, "", "message_id", ""),
        (2, "contextId", "string", 0, "", "context_id", ""),
        (3, "taskId", "string", 0, "", "task_id", ""),
        (4, "role", "enum", 0, "Role", "role", ""),
        (5, "parts", "message", 2, "Part", "parts", ""),
        (6, "metadata", "struct", 0, "", "metadata", ""),
        (7, "extensions", "string", 2, "", "extensions", ""),
        (8, "referenceTaskIds", "string", 2, "", "reference_task_ids", ""),
    ),
    "Artifact": (
        (1, "artifactId", "string", 0, "", "artifact_id", ""),
        (2, "name", "string", 0, "", "name", ""),
        (3, "description", "string", 0, "", "description", ""),
        (4, "parts", "message", 2, "Part", "parts", ""),
        (5, "metadata", "struct", 0, "", "metadata", ""),
        (6, "extensions", "string", 2, "", "extensions", ""),
    ),
    "TaskStatusUpdateEvent": (
        (1, "taskId", "string", 0, "", "task_id", ""),
        (2, "contextId", "string", 0, "", "context_id", ""),
        (3, "status", "message", 0, "TaskStatus", "status", ""),
        (4, "metadata", "struct", 0, "", "metadata", ""),
    ),
    "TaskArtifactUpdateEvent": (
        (1, "taskId", "string", 0, "", "task_id", ""),
        (2, "contextId", "string", 0, "", "context_id", ""),
        (3, "artifact", "message", 0, "Artifact", "artifact", ""),
        (4, "append", "bool", 0, "", "append", ""),
        (5, "lastChunk", "bool", 0, "", "last_chunk", ""),
        (6, "metadata", "struct", 0, "", "metadata", ""),
    ),
    "AuthenticationInfo": (
        (1, "scheme", "string", 0, "", "scheme", ""),
        (2, "credentials", "string", 0, "", "credentials", ""),
    ),
    "AgentInterface": (
        (1, "url", "string", 0, "", "url", ""),
        (2, "protocolBinding", "string", 0, "", "protocol_binding", ""),
        (3, "tenant", "string", 0, "", "tenant", ""),
        (4, "protocolVersion", "string", 0, "", "protocol_version", ""),
    ),
    "AgentCard": (
        (1, "name", "string", 0, "", "name", ""),
        (2, "description", "string", 0, "", "description", ""),
        (3, "supportedInterfaces", "message", 2, "AgentInterface", "supported_interfaces", ""),
        (4, "provider", "message", 0, "AgentProvider", "provider", ""),
        (5, "version", "string", 0, "", "version", ""),
        (6, "documentationUrl", "string", 1, "", "documentation_url", ""),
        (7, "capabilities", "message", 0, "AgentCapabilities", "capabilities", ""),
        (8, "securitySchemes", "message", 3, "SecurityScheme", "security_schemes", ""),
        (9, "securityRequirements", "message", 2, "SecurityRequirement", "security_requirements", ""),
        (10, "defaultInputModes", "string", 2, "", "default_input_modes", ""),
        (11, "defaultOutputModes", "string", 2, "", "default_output_modes", ""),
        (12, "skills", "message", 2, "AgentSkill", "skills", ""),
        (13, "signatures", "message", 2, "AgentCardSignature", "signatures", ""),
        (14, "iconUrl", "string", 1, "", "icon_url", ""),
    ),
    "AgentProvider": (
        (1, "url", "string", 0, "", "url", ""),
        (2, "organization", "string", 0, "", "organization", ""),
    ),
    "AgentCapabilities": (
        (1, "streaming", "bool", 1, "", "streaming", ""),
        (2, "pushNotifications", "bool", 1, "", "push_notifications", ""),
        (3, "extensions", "message", 2, "AgentExtension", "extensions", ""),
        (4, "extendedAgentCard", "bool", 1, "", "extended_agent_card", ""),
    ),
    "AgentExtension": (
        (1, "uri", "string", 0, "", "uri", ""),
        (2, "description", "string", 0, "", "description", ""),
        (3, "required", "bool", 0, "", "required", ""),
        (4, "params", "struct", 0, "", "params", ""),
    ),
    "AgentSkill": (
        (1, "id", "string", 0, "", "id", ""),
        (2, "name", "string", 0, "", "name", ""),
        (3, "description", "string", 0, "", "description", ""),
        (4, "tags", "string", 2, "", "tags", ""),
        (5, "examples", "string", 2, "", "examples", ""),
        (6, "inputModes", "string", 2, "", "input_modes", ""),
        (7, "outputModes", "string", 2, "", "output_modes", ""),
        (8, "securityRequirements", "message", 2, "SecurityRequirement", "security_requirements", ""),
    ),
    "AgentCardSignature": (
        (1, "protected", "string", 0, "", "protected", ""),
        (2, "signature", "string", 0, "", "signature", ""),
        (3, "header", "struct", 0, "", "header", ""),
    ),
    "TaskPushNotificationConfig": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "id", "string", 0, "", "id", ""),
        (3, "taskId", "string", 0, "", "task_id", ""),
        (4, "url", "string", 0, "", "url", ""),
        (5, "token", "string", 0, "", "token", ""),
        (6, "authentication", "message", 0, "AuthenticationInfo", "authentication", ""),
    ),
    "StringList": (
        (1, "list", "string", 2, "", "list", ""),
    ),
    "SecurityRequirement": (
        (1, "schemes", "message", 3, "StringList", "schemes", ""),
    ),
    "SecurityScheme": (
        (1, "apiKeySecurityScheme", "message", 1, "APIKeySecurityScheme", "api_key_security_scheme", "scheme"),
        (2, "httpAuthSecurityScheme", "message", 1, "HTTPAuthSecurityScheme", "http_auth_security_scheme", "scheme"),
        (3, "oauth2SecurityScheme", "message", 1, "OAuth2SecurityScheme", "oauth2_security_scheme", "scheme"),
        (4, "openIdConnectSecurityScheme", "message", 1, "OpenIdConnectSecurityScheme", "open_id_connect_security_scheme", "scheme"),
        (5, "mtlsSecurityScheme", "message", 1, "MutualTlsSecurityScheme", "mtls_security_scheme", "scheme"),
    ),
    "APIKeySecurityScheme": (
        (1, "description", "string", 0, "", "description", ""),
        (2, "location", "string", 0, "", "location", ""),
        (3, "name", "string", 0, "", "name", ""),
    ),
    "HTTPAuthSecurityScheme": (
        (1, "description", "string", 0, "", "description", ""),
        (2, "scheme", "string", 0, "", "scheme", ""),
        (3, "bearerFormat", "string", 0, "", "bearer_format", ""),
    ),
    "OAuth2SecurityScheme": (
        (1, "description", "string", 0, "", "description", ""),
        (2, "flows", "message", 0, "OAuthFlows", "flows", ""),
        (3, "oauth2MetadataUrl", "string", 0, "", "oauth2_metadata_url", ""),
    ),
    "OpenIdConnectSecurityScheme": (
        (1, "description", "string", 0, "", "description", ""),
        (2, "openIdConnectUrl", "string", 0, "", "open_id_connect_url", ""),
    ),
    "MutualTlsSecurityScheme": (
        (1, "description", "string", 0, "", "description", ""),
    ),
    "OAuthFlows": (
        (1, "authorizationCode", "message", 1, "AuthorizationCodeOAuthFlow", "authorization_code", "flow"),
        (2, "clientCredentials", "message", 1, "ClientCredentialsOAuthFlow", "client_credentials", "flow"),
        (3, "implicit", "message", 1, "ImplicitOAuthFlow", "implicit", "flow"),
        (4, "password", "message", 1, "PasswordOAuthFlow", "password", "flow"),
        (5, "deviceCode", "message", 1, "DeviceCodeOAuthFlow", "device_code", "flow"),
    ),
    "AuthorizationCodeOAuthFlow": (
        (1, "authorizationUrl", "string", 0, "", "authorization_url", ""),
        (2, "tokenUrl", "string", 0, "", "token_url", ""),
        (3, "refreshUrl", "string", 0, "", "refresh_url", ""),
        (4, "scopes", "string", 3, "", "scopes", ""),
        (5, "pkceRequired", "bool", 0, "", "pkce_required", ""),
    ),
    "ClientCredentialsOAuthFlow": (
        (1, "tokenUrl", "string", 0, "", "token_url", ""),
        (2, "refreshUrl", "string", 0, "", "refresh_url", ""),
        (3, "scopes", "string", 3, "", "scopes", ""),
    ),
    "ImplicitOAuthFlow": (
        (1, "authorizationUrl", "string", 0, "", "authorization_url", ""),
        (2, "refreshUrl", "string", 0, "", "refresh_url", ""),
        (3, "scopes", "string", 3, "", "scopes", ""),
    ),
    "PasswordOAuthFlow": (
        (1, "tokenUrl", "string", 0, "", "token_url", ""),
        (2, "refreshUrl", "string", 0, "", "refresh_url", ""),
        (3, "scopes", "string", 3, "", "scopes", ""),
    ),
    "DeviceCodeOAuthFlow": (
        (1, "deviceAuthorizationUrl", "string", 0, "", "device_authorization_url", ""),
        (2, "tokenUrl", "string", 0, "", "token_url", ""),
        (3, "refreshUrl", "string", 0, "", "refresh_url", ""),
        (4, "scopes", "string", 3, "", "scopes", ""),
    ),
    "SendMessageRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "message", "message", 0, "Message", "message", ""),
        (3, "configuration", "message", 0, "SendMessageConfiguration", "configuration", ""),
        (4, "metadata", "struct", 0, "", "metadata", ""),
    ),
    "GetTaskRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "id", "string", 0, "", "id", ""),
        (3, "historyLength", "int32", 1, "", "history_length", ""),
    ),
    "ListTasksRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "contextId", "string", 0, "", "context_id", ""),
        (3, "status", "enum", 0, "TaskState", "status", ""),
        (4, "pageSize", "int32", 1, "", "page_size", ""),
        (5, "pageToken", "string", 0, "", "page_token", ""),
        (6, "historyLength", "int32", 1, "", "history_length", ""),
        (7, "statusTimestampAfter", "timestamp", 0, "", "status_timestamp_after", ""),
        (8, "includeArtifacts", "bool", 1, "", "include_artifacts", ""),
    ),
    "ListTasksResponse": (
        (1, "tasks", "message", 2, "Task", "tasks", ""),
        (2, "nextPageToken", "string", 0, "", "next_page_token", ""),
        (3, "pageSize", "int32", 0, "", "page_size", ""),
        (4, "totalSize", "int32", 0, "", "total_size", ""),
    ),
    "CancelTaskRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "id", "string", 0, "", "id", ""),
        (3, "metadata", "struct", 0, "", "metadata", ""),
    ),
    "GetTaskPushNotificationConfigRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "taskId", "string", 0, "", "task_id", ""),
        (3, "id", "string", 0, "", "id", ""),
    ),
    "DeleteTaskPushNotificationConfigRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "taskId", "string", 0, "", "task_id", ""),
        (3, "id", "string", 0, "", "id", ""),
    ),
    "SubscribeToTaskRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
        (2, "id", "string", 0, "", "id", ""),
    ),
    "ListTaskPushNotificationConfigsRequest": (
        (1, "taskId", "string", 0, "", "task_id", ""),
        (2, "pageSize", "int32", 0, "", "page_size", ""),
        (3, "pageToken", "string", 0, "", "page_token", ""),
        (4, "tenant", "string", 0, "", "tenant", ""),
    ),
    "GetExtendedAgentCardRequest": (
        (1, "tenant", "string", 0, "", "tenant", ""),
    ),
    "SendMessageResponse": (
        (1, "task", "message", 1, "Task", "task", "payload"),
        (2, "message", "message", 1, "Message", "message", "payload"),
    ),
    "StreamResponse": (
        (1, "task", "message", 1, "Task", "task", "payload"),
        (2, "message", "message", 1, "Message", "message", "payload"),
        (3, "statusUpdate", "message", 1, "TaskStatusUpdateEvent", "status_update", "payload"),
        (4, "artifactUpdate", "message", 1, "TaskArtifactUpdateEvent", "artifact_update", "payload"),
    ),
    "ListTaskPushNotificationConfigsResponse": (
        (1, "configs", "message", 2, "TaskPushNotificationConfig", "configs", ""),
        (2, "nextPageToken", "string", 0, "", "next_page_token", ""),
    ),
    "Struct": (
        (1, "fields", "message", 3, "Value", "fields", ""),
    ),
    "Value": (
        (1, "nullValue", "enum", 1, "NullValue", "null_value", "kind"),
        (2, "numberValue", "double", 1, "", "number_value", "kind"),
        (3, "stringValue", "string", 1, "", "string_value", "kind"),
        (4, "boolValue", "bool", 1, "", "bool_value", "kind"),
        (5, "structValue", "message", 1, "Struct", "struct_value", "kind"),
        (6, "listValue", "message", 1, "ListValue", "list_value", "kind"),
    ),
    "ListValue": (
        (1, "values", "message", 2, "Value", "values", ""),
    ),
    "Timestamp": (
        (1, "seconds", "int64", 0, "", "seconds", ""),
        (2, "nanos", "int32", 0, "", "nanos", ""),
    ),
    "Empty": (
    ),
    "Any": (
        (1, "typeUrl", "string", 0, "", "type_url", ""),
        (2, "value", "bytes", 0, "", "value", ""),
    ),
    "Status": (
        (1, "code", "int32", 0, "", "code", ""),
        (2, "message", "string", 0, "", "message", ""),
        (3, "details", "message", 2, "Any", "details", ""),
    ),
    "ErrorInfo": (
        (1, "reason", "string", 0, "", "reason", ""),
        (2, "domain", "string", 0, "", "domain", ""),
        (3, "metadata", "string", 3, "", "metadata", ""),
    ),
    "BadRequest": (
        (1, "fieldViolations", "message", 2, "FieldViolation", "field_violations", ""),
    ),
    "FieldViolation": (
        (1, "field", "string", 0, "", "field", ""),
        (2, "description", "string", 0, "", "description", ""),
        (3, "reason", "string", 0, "", "reason", ""),
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
