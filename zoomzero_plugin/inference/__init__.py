"""Inference backends (transformers; vLLM when installed) and modes (one-stage, coarse-to-fine, divide-and-conquer, iterative)."""
