"""Dashboard pages, included under /dashboards/ as namespace ``dashboards`` (the JSON behind
the charts is under /api/v1/dashboards/, analytics.api_urls)."""

from django.urls import path

from analytics import views

app_name = "dashboards"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("topics/<str:topic>/", views.topic, name="topic"),
    path("groups/<str:group>/", views.group, name="group"),
    path("refresh", views.refresh, name="refresh"),
]
