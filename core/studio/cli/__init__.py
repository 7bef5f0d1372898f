"""One module per command; each defines ``register(subparsers)`` and sets ``handler``."""
