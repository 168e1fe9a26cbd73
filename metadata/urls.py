"""Metadata pages (included at the site root as namespace ``metadata``: /metadata/...) and API routes
(api_urlpatterns, included under /api/v1/ by console.api_urls: /api/v1/metadata/...)."""

from django.urls import path

from console.rest import ApiRouter
from metadata import views
from metadata.api import MetadataViewSet

app_name = "metadata"

urlpatterns = [
    path("metadata/", views.metadata_page, name="page"),
    path("metadata/export", views.metadata_export_page, name="export"),
    path("metadata/dry-run", views.metadata_dry_run_page, name="dry-run"),
    path("metadata/apply", views.metadata_apply_page, name="apply"),
]

router = ApiRouter()
router.register("metadata", MetadataViewSet, basename="metadata")
api_urlpatterns = router.urls
