"""Model and data definitions shared by workloads, one module per model family.

Framework imports stay inside functions, like everywhere in benchlib.
"""
