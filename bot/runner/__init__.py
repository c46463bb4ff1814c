"""The triage runner: the pool of live triages and its workers, one triage from target to report, captures, stored
runs, and saving a production incident as a drill."""
