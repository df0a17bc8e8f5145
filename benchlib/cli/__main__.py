"""`python -m benchlib.cli`: the `benchlib` command where it is not on PATH."""

from benchlib.cli import main

main()
