"""Consumer pages (included at the site root as namespace ``consumers``: /groups/..., /allocation/)
and API routes (api_urlpatterns, included under /api/v1/ by console.api_urls)."""
from django.urls import path

from console.rest import ApiRouter
from consumers import views
from consumers.api import AllocationViewSet, GroupViewSet

app_name = "consumers"

urlpatterns = [
    path("groups/", views.group_list, name="list"),
    path("groups/<str:name>/", views.group_detail, name="detail"),
    path("groups/<str:name>/reset-offset", views.group_reset_offset, name="reset-offset"),
    path("allocation/", views.allocation, name="allocation"),
]

router = ApiRouter()
router.register("groups", GroupViewSet, basename="group")
router.register("allocation", AllocationViewSet, basename="allocation")
api_urlpatterns = router.urls
