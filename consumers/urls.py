"""Consumer pages (included at the site root as namespace ``consumers``: /groups/..., /allocation/)
and API routes (api_urlpatterns, included under /api/v1/ by console.api_urls)."""

from django.urls import path

from console.rest import ApiRouter
from consumers import alert_views, views
from consumers.subscription_groups import views as subscription_group_views
from consumers.alert_api import AlertEventViewSet, AlertRuleViewSet
from consumers.api import AllocationViewSet, GroupViewSet, RebalanceJobViewSet
from consumers.subscription_groups.api import SubscriptionGroupViewSet

app_name = "consumers"

urlpatterns = [
    path("groups/", views.group_list, name="list"),
    path("groups/<str:name>/", views.group_detail, name="detail"),
    path(
        "groups/<str:name>/clients/<str:client_id>/running-info", views.client_running_info, name="client-running-info"
    ),
    path("groups/<str:name>/reset-offset", views.group_reset_offset, name="reset-offset"),
    path("groups/<str:name>/rebalance", views.group_rebalance, name="rebalance"),
    path("rebalance-jobs/", views.rebalance_jobs_page, name="rebalance-jobs"),
    path("rebalance-jobs/<int:pk>/", views.rebalance_job, name="rebalance-job"),
    path("allocation/", views.allocation, name="allocation"),
    path("subscription-groups/", subscription_group_views.subscription_group_list, name="subscription-groups"),
    path(
        "subscription-groups/new", subscription_group_views.subscription_group_create, name="subscription-group-create"
    ),
    path(
        "subscription-groups/<str:name>/edit",
        subscription_group_views.subscription_group_update,
        name="subscription-group-update",
    ),
    path(
        "subscription-groups/<str:name>/delete",
        subscription_group_views.subscription_group_delete,
        name="subscription-group-delete",
    ),
    path("alerts/", alert_views.alert_rules_page, name="alert-rules"),
    path("alerts/rules/<int:pk>/", alert_views.alert_rule_page, name="alert-rule"),
    path("alerts/events/", alert_views.alert_events_page, name="alert-events"),
]

router = ApiRouter()
router.register("groups", GroupViewSet, basename="group")
router.register("allocation", AllocationViewSet, basename="allocation")
router.register("rebalance-jobs", RebalanceJobViewSet, basename="rebalance-job")
router.register("subscription-groups", SubscriptionGroupViewSet, basename="subscription-group")
router.register("alert-rules", AlertRuleViewSet, basename="alert-rule")
router.register("alert-events", AlertEventViewSet, basename="alert-event")
api_urlpatterns = router.urls
