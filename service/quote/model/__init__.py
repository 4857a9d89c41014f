"""The per-snapshot model: pricing kinds reduced to one billing rule, combined plans, scaling curves,
memory fit, and the offer tables a request is evaluated over (``Snapshot``)."""
