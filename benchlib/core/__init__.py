"""The stage every other one stands on: timing, paths, units, dates, quiet logs, shipped files.

Nothing here imports another part of benchlib or a framework.
"""
