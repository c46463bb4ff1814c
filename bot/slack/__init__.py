"""The Slack front end: thin bolt handlers, the command grammars and the flows behind them."""
