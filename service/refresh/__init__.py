"""The refresh pipeline: fetch every vendor, screen the prices, write each vendor atomically."""

from service.refresh.pipeline import RefreshService
from service.refresh.quarantine import ScreenedPrices, screen_prices

__all__ = ["RefreshService", "ScreenedPrices", "screen_prices"]
