"""triagebot: evidence-first incident triage for GPU Kubernetes clusters."""

# The one place the version is written: pyproject reads it (tool.setuptools.dynamic), and `--version` prints it
# without importlib.metadata, which costs more than the rest of that command.
__version__ = "0.1.0"
