"""Dead-letter pages (included at the site root as namespace ``dlq``: /groups/<name>/dlq/...) and
API routes (api_urlpatterns, included under /api/v1/ by console.api_urls: /api/v1/groups/{name}/dlq...)."""

from django.urls import path

from console.rest import ApiRouter
from topics.dead_letters import views
from topics.dead_letters.api import DeadLetterViewSet

app_name = "dlq"

urlpatterns = [
    path("groups/<str:name>/dlq/", views.dead_letters, name="list"),
    path("groups/<str:name>/dlq/resend", views.dead_letter_resend_page, name="resend"),
    path("groups/<str:name>/dlq/export", views.dead_letter_export_page, name="export"),
]

router = ApiRouter()
router.register(r"groups/(?P<name>[^/]+)/dlq", DeadLetterViewSet, basename="group-dlq")
api_urlpatterns = router.urls
