"""Start-up (placeholder docstring, written below)."""
