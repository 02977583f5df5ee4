"""This package inside other tools' plugin systems: :mod:`.lmms_eval` (the inference modes as an lmms-eval model,
the grounded-QA benchmarks as lmms-eval tasks). Tools over the inference and evaluation layers; no host code."""
