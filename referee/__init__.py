"""chicago-referee: runs card games between bots that speak line-delimited JSON.

The wings live in subpackages (see docs/architecture.md); only the version and
the error family (`referee.errors`) stay here, and they import nothing else."""

__version__ = "0.1.0"
