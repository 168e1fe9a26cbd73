"""API routes of the brokers app (included under /api/v1/ by console.api_urls)."""
from brokers.api import AlertViewSet, BrokerViewSet, ClusterViewSet, NamesrvViewSet
from console.rest import ApiRouter

router = ApiRouter()
router.register("clusters", ClusterViewSet, basename="cluster")
router.register("brokers", BrokerViewSet, basename="broker")
router.register("namesrvs", NamesrvViewSet, basename="namesrv")
router.register("alerts", AlertViewSet, basename="alert")
api_urlpatterns = router.urls
