"""Figures derived from results files and committed tables: the score, predicted-against-measured
checks, and the list of dated facts.
"""
