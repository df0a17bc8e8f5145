"""Measuring a machine: the runner, isolation, conditions, telemetry, the max-batch search,
data-parallel launches, the campaign and the site build's measurement of its own machine. Results go to files through `benchlib.results.store`.
"""
