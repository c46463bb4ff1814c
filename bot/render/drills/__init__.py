"""Rendering of drills and interviews: the debrief, the terminal and Slack drills, grades, replay tables."""
