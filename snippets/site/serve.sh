# Serve the site at http://127.0.0.1:8000/; it rebuilds when docs/, results/ or snippets/ change
mkdocs serve
