"""Topic pages (included under /topics/ as namespace ``topics``) and API routes (api_urlpatterns,
included under /api/v1/ by console.api_urls)."""

from django.urls import path

from console.rest import ApiRouter
from topics import views
from topics.api import TopicViewSet

app_name = "topics"

urlpatterns = [
    path("", views.topic_list, name="list"),
    path("new", views.topic_create, name="create"),
    path("<str:name>/", views.topic_detail, name="detail"),
    path("<str:name>/edit", views.topic_update, name="update"),
    path("<str:name>/delete", views.topic_delete, name="delete"),
    path("<str:name>/send", views.topic_send, name="send"),
    path("<str:name>/shrink", views.topic_shrink, name="shrink"),
]

router = ApiRouter()
router.register("topics", TopicViewSet, basename="topic")
api_urlpatterns = router.urls
