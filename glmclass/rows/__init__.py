"""The one row source: :class:`~glmclass.rows.blocks.RowBlocks` over rows in memory
(:mod:`glmclass.rows.blocks`) or in the partitions of Dask collections
(:mod:`glmclass.rows.dask`, imported only when Dask data are given), and the block kernels
(X'WX, X'Wz, column scales) that every pass over rows uses (:mod:`glmclass.rows.gram`)."""
