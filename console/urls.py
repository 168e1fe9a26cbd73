"""The URL map: the overview (brokers.urls), console pages, /topics/ pages, /api/v1/ (console.api_urls), health."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import metrics, preference_views, views

urlpatterns = [
    path("", include("brokers.urls")),
    path("favicon.ico", views.favicon, name="favicon"),  # browsers ask for it; base.html links static/favicon.svg
    path("health", views.health, name="health"),
    path("metrics", metrics.metrics, name="metrics"),
    path("healthz", views.healthz, name="healthz"),  # liveness (load balancers; console.views)
    path("readyz", views.readyz, name="readyz"),  # readiness: the database answers
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("audit/", views.audit_log, name="audit-log"),
    path("users/", views.users, name="users"),
    path("users/<str:username>/change", views.user_change, name="user-change"),
    path("users/<str:username>/password", views.user_password, name="user-set-password"),
    path("account/password/", views.password_change, name="password-change"),
    path("account/preferences/", preference_views.account_preferences, name="account-preferences"),
    path("i18n/language/", preference_views.language_switch, name="set-language"),  # the header's switcher
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
    path("topics/", include("topics.urls")),
    path("messages/", include("topics.messages.urls")),
    path("dashboards/", include("analytics.urls")),
    path("", include("consumers.urls")),
    path("", include("health.urls")),  # /alerts/
    path("", include("topics.dead_letters.urls")),  # /groups/<name>/dlq/
    path("", include("metadata.urls")),  # /metadata/
    path("api/v1/", include("console.api_urls")),
]

handler404 = "console.views.not_found"
