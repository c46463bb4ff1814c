"""The terminal front end: `triagebot` and its subcommands."""
