"""Settings: the endpoint, the embedded model, prices, corpora and method defaults."""
