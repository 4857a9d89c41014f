"""Prose: every sentence the engine and the command line write, in English and Chinese, and the summaries.

No engine types: the summaries read the response's ``Quote`` structs and the names to show.
"""
