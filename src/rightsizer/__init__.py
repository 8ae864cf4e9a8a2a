"""GPU Rightsizer: keeps an AWS GPU / Inferentia / Trainium fleet right-sized."""

__version__ = "0.1.0"
