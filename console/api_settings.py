"""The REST API's settings, imported by console.settings: DRF (authentication, roles, bounded JSON,
pagination, errors, the schema class) and drf-spectacular (the OpenAPI schema's hooks and enum names).
Plain data: nothing here reads the environment or imports an app."""

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes "no credentials" a 401, not a 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "console.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["console.permissions.RolePermission"],
    "DEFAULT_PARSER_CLASSES": ["console.json_parser.BoundedJSONParser"],  # DRF's, with a nesting limit (400)
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "console.rest.Pagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "console.http_errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "console.schema.ApiAutoSchema",  # says what strict inputs refuse
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Gantry management API",
    "DESCRIPTION": (
        "Manage a RocketMQ-compatible cluster: brokers, topics, users, API tokens and the audit log. "
        "Authenticate with `Authorization: Token <token>` (POST /api/v1/auth/token) or a console session."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["console.permissions.RolePermission"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "PREPROCESSING_HOOKS": ["console.schema.document_without_trailing_slash"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "console.schema.apply_schema_rules",
        "console.schema.describe_name_parameters",
        "console.schema.document_errors",
    ],
    # two "role" fields: a user's role and the role a promoted slave takes (SYNC_MASTER / ASYNC_MASTER)
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "console.roles.Role",
        "MasterRoleEnum": "brokers.gateway.promotion.PROMOTION_ROLES",
        "AclPermEnum": "brokers.acl.serializers.PERMS",
        "AlertKindEnum": "health.models.KINDS",
        "GroupKindEnum": "consumers.types.GROUP_KINDS",
        "TopicMessageTypeEnum": "topics.rules.MESSAGE_TYPES",
    },
}
