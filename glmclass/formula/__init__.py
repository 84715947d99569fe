"""Formula support: :mod:`glmclass.formula.design` builds designs, :mod:`glmclass.formula.api`
has the lowercase entry points (``gcf.logit("y ~ x", df)``)."""
