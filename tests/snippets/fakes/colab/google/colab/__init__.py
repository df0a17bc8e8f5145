"""Stand-in for Colab's ``google.colab`` package, for running snippets in tests.

``google`` is left without ``__init__.py`` so it stays a namespace package and
``google.protobuf`` and friends still import.
"""
