"""Measuring a machine: the runner, isolation, conditions, telemetry, the max-batch search,
data-parallel launches and the campaign. Results go to files through `benchlib.results.store`.
"""
