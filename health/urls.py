"""Alert pages (included at the site root as namespace ``health``: /alerts/...) and API routes
(api_urlpatterns, included under /api/v1/ by console.api_urls: alert-rules, alert-events)."""

from django.urls import path

from console.rest import ApiRouter
from health import views
from health.api import AlertEventViewSet, AlertRuleViewSet

app_name = "health"

urlpatterns = [
    path("alerts/", views.alert_rules_page, name="alert-rules"),
    path("alerts/rules/<int:pk>/", views.alert_rule_page, name="alert-rule"),
    path("alerts/events/", views.alert_events_page, name="alert-events"),
]

router = ApiRouter()
router.register("alert-rules", AlertRuleViewSet, basename="alert-rule")
router.register("alert-events", AlertEventViewSet, basename="alert-event")
api_urlpatterns = router.urls
