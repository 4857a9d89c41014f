"""Assembling the returned quotes: figures gathered from the evaluation, line items, warnings and notes."""
