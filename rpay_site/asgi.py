"""ASGI entry point (uvicorn, daphne)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rpay_site.settings")
application = get_asgi_application()
