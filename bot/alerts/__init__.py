"""Alert services shared by the webhook and the Slack app: the root message's data, Alertmanager's API (silences),
and a storm's outcomes message."""
