"""Routes of the brokers app: the overview page at / (included by console.urls) and the API
routes (``api_urlpatterns``, included under /api/v1/ by console.api_urls)."""
from django.urls import path

from brokers import views
from brokers.api import AlertViewSet, BrokerViewSet, ClusterViewSet, NamesrvViewSet
from console.rest import ApiRouter

urlpatterns = [
    path("", views.home, name="home"),
]

router = ApiRouter()
router.register("clusters", ClusterViewSet, basename="cluster")
router.register("brokers", BrokerViewSet, basename="broker")
router.register("namesrvs", NamesrvViewSet, basename="namesrv")
router.register("alerts", AlertViewSet, basename="alert")
api_urlpatterns = router.urls
