"""The quote engine: pure functions from a price snapshot and a request to ranked, costed quotes."""
