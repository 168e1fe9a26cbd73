"""Consumer pages (included at the site root as namespace ``consumers``: /groups/..., /allocation/)
and API routes (api_urlpatterns, included under /api/v1/ by console.api_urls)."""

from django.urls import path

from console.rest import ApiRouter
from consumers import views
from consumers.subscription_groups import views as subscription_group_views
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
]

router = ApiRouter()
router.register("groups", GroupViewSet, basename="group")
router.register("allocation", AllocationViewSet, basename="allocation")
router.register("rebalance-jobs", RebalanceJobViewSet, basename="rebalance-job")
router.register("subscription-groups", SubscriptionGroupViewSet, basename="subscription-group")
api_urlpatterns = router.urls
