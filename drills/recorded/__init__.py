"""Recorded incidents: the folder format, reading one through any subset of its sources, recording a live
triage, replaying it through the pipeline, and the catalog a trainee picks from."""
