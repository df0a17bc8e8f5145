# The site in site/, its charts drawn from the files in results/
mkdocs build --strict
# The same, plus this machine measured now and marked ★ in the charts
BENCHLIB_MEASURE=quick mkdocs build --strict
