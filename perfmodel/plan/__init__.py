"""Answers for planners: sizing, its views, sweeps, the notebooks' studies, the interactive planner and the
report.
"""
