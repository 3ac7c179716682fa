"""Qt-free runtime: from a model and inputs to what the analyses and views consume."""
