"""What a prediction is asked about: hardware catalog, system specs, knobs, workload, parameters, units and
errors.
"""
