"""Bulk evaluation: every candidate (offer × card count) a response can read, billed and judged at once."""
