"""Benchmarks: the performance figures the issues ask for (printed, never asserted in tests)."""
