"""Parsers of alerts in any form: Alertmanager's webhook JSON and alert text as people paste it."""
