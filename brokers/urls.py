"""Routes of the brokers app: the overview page at /, a broker group's page with its promotion
panel, promotion jobs' pages, the Access control page (included by console.urls), and the API routes
(``api_urlpatterns``, included under /api/v1/ by console.api_urls)."""

from django.urls import path

from brokers import views
from brokers.acl import views as acl_views
from brokers.acl.api import AclAccountViewSet, AclGlobalWhiteView
from brokers.namesrv_sets import views as namesrv_set_views
from brokers.namesrv_sets.api import NamesrvSetViewSet
from brokers.api import (
    AlertViewSet,
    BrokerGroupViewSet,
    BrokerViewSet,
    ClusterViewSet,
    NamesrvViewSet,
    ProducerViewSet,
    PromotionJobViewSet,
)
from console.rest import ApiRouter

urlpatterns = [
    path("", views.home, name="home"),
    path("brokers/<str:name>/", views.broker_group, name="broker-group"),
    path("brokers/<str:name>/promote", views.broker_promote, name="broker-group-promote"),
    path("promotion-jobs/<int:pk>/", views.promotion_job, name="promotion-job"),
    path("producers/", views.producers, name="producers"),
    path("acl/", acl_views.acl_page, name="acl"),
    path("acl/accounts", acl_views.acl_account_post, name="acl-account"),
    path("acl/accounts/<str:access_key>/delete", acl_views.acl_account_delete, name="acl-account-delete"),
    path("acl/global-white-addresses", acl_views.acl_global_white_post, name="acl-global-white"),
    path("namesrv-sets/", namesrv_set_views.namesrv_sets_page, name="namesrv-sets"),
    path("namesrv-sets/save", namesrv_set_views.namesrv_set_post, name="namesrv-set"),
    path("namesrv-sets/<str:name>/delete", namesrv_set_views.namesrv_set_delete, name="namesrv-set-delete"),
]

router = ApiRouter()
router.register("clusters", ClusterViewSet, basename="cluster")
router.register("brokers", BrokerViewSet, basename="broker")
router.register("broker-groups", BrokerGroupViewSet, basename="broker-group")
router.register("promotion-jobs", PromotionJobViewSet, basename="promotion-job")
router.register("namesrvs", NamesrvViewSet, basename="namesrv")
router.register("alerts", AlertViewSet, basename="alert")
router.register("producers", ProducerViewSet, basename="producer")
router.register("acl/accounts", AclAccountViewSet, basename="acl-account")
router.register("namesrv-sets", NamesrvSetViewSet, basename="namesrv-set")
api_urlpatterns = [
    *router.urls,
    path("acl/global-white-addresses", AclGlobalWhiteView.as_view(), name="api-acl-global-white"),
]
