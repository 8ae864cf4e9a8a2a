"""Demo helpers: an embedded local AWS (moto) seeded with a sample GPU fleet."""
