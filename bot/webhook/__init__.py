"""The Alertmanager front end: the webhook payload and what an alert group does."""
