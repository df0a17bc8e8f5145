"""Curated data with sources and dates, and its lookups: GPU specs, platforms, language models.

The data itself is in ``benchlib/data/``; these modules validate it and find entries by name.
"""
