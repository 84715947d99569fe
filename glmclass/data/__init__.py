"""Model data: validated arrays or a formula's design (:mod:`glmclass.data.model_data`), the
encoded response (:mod:`glmclass.data.response`) and the Dask adapter (:mod:`glmclass.data.dask`,
imported only when Dask data are given)."""
