from django.contrib.auth import views as auth_views
from django.urls import path

from console import views

urlpatterns = [
    path("", views.home, name="home"),
    path("health", views.health, name="health"),
    path("login/", auth_views.LoginView.as_view(template_name="console/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
