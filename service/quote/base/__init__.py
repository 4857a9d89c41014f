"""The engine's ground floor: array type names, rounding at the edge, and the one memo mechanism.

Nothing here knows an offer, a request or a quote; every other floor may use it.
"""
