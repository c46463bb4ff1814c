"""`python -m bot.cli`: the same as the `triagebot` command."""

from bot.cli.main import main

raise SystemExit(main())
