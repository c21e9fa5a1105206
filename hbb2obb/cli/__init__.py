"""Console commands: thin click wrappers that parse, call the core, render, and exit."""
