"""Dashboard API routes (api_urlpatterns, included under /api/v1/ by console.api_urls)."""

from analytics.api import DashboardViewSet, RefreshRunViewSet
from console.rest import ApiRouter

router = ApiRouter()
router.register("dashboards/refresh-runs", RefreshRunViewSet, basename="dashboard-refresh-run")
router.register("dashboards", DashboardViewSet, basename="dashboard")
api_urlpatterns = router.urls
