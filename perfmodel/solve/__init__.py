"""Vectorised solution of the stage chain's station networks: closed and open solves, corrections and
tails.
"""
