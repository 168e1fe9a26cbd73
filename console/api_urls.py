"""/api/v1/: every app's API routes, the auth endpoints, the OpenAPI schema and its docs.

An app adds its routes by exposing ``api_urlpatterns`` in its urls module and being listed in
APP_API_URLS.
"""

from importlib import import_module

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from console import api
from console.rest import ApiRouter

APP_API_URLS = [
    "brokers.urls",
    "topics.urls",
    "topics.messages.urls",
    "consumers.urls",
    "health.urls",
    "topics.dead_letters.urls",
    "analytics.api_urls",
    "metadata.urls",
]

router = ApiRouter()
router.register("users", api.UserViewSet, basename="user")
router.register("tokens", api.TokenViewSet, basename="token")
router.register("audit-log", api.AuditLogViewSet, basename="audit-log")

urlpatterns = [
    path("auth/token", api.AuthTokenView.as_view(), name="api-auth-token"),
    path("auth/whoami", api.WhoAmIView.as_view(), name="api-whoami"),
    path("auth/password", api.PasswordChangeView.as_view(), name="api-password"),
    path("schema", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "docs", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"
    ),  # init script apart: no inline script (CSP)
    *router.urls,
]
for module in APP_API_URLS:
    urlpatterns += import_module(module).api_urlpatterns
