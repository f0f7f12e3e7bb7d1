"""chicago-referee: runs card games between bots that speak line-delimited JSON."""

__version__ = "0.1.0"
