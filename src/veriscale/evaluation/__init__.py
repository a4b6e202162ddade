"""Evaluation: scoring model outputs on suites, re-checking suites against their ground truth."""
