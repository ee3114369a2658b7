"""Turning result objects into text for people and machines. Only this package and the CLI print."""
