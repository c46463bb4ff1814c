"""Readers of single lines and sentences wherever they appear: line signals and stated facts."""
