"""The model: a configuration grid through the stage chain to a prediction table (``perfmodel.predict``)."""
