"""Sub-models of the physics a request meets: CPU scaling, caches, storage devices and bursts, replication,
placement.
"""
