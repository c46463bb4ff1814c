"""Reference data shipped with the parsers (as YAML), with typed loaders."""
