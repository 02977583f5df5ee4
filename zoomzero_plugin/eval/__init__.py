"""Benchmark runner, official metrics, reports and plots."""
