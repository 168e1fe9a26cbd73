"""Message pages (included under /messages/ as namespace ``messages``) and API routes
(api_urlpatterns, included under /api/v1/ by console.api_urls)."""

from django.urls import path

from console.rest import ApiRouter
from topics.messages import views as message_views
from topics.traces import views as trace_views
from topics.messages.api import MessageViewSet

app_name = "messages"

urlpatterns = [
    path("", message_views.message_query, name="query"),
    path("trace/", trace_views.trace_page, name="trace"),  # before the detail: "trace" is no message id
    path("<str:msg_id>/", message_views.message_detail, name="detail"),
    path("<str:msg_id>/resend", message_views.message_resend, name="resend"),
]

router = ApiRouter()
router.register("messages", MessageViewSet, basename="message")
api_urlpatterns = router.urls
