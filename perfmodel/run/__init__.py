"""Where work runs: in-process, local workers or Dask, and batch execution of the papermill notebooks."""
