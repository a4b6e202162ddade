"""Reports: Table 1 volume figures, and (later) timings, kill figures and plots."""
