"""Wire dialects other than v1.0, each converted to and from the v1.0 model at the edge."""
