"""Figures derived from results files: which files the site reads (`results_files`), the score,
the predictions each workload declares for its records checked against them (`checks`,
`searched`), the comparison with published throughput (`published_speed`), and the list of dated facts.
"""
