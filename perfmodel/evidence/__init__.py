"""Recorded figures and what they say about the model: calibration, validation, bands, the corpus, the
first-look record.
"""
