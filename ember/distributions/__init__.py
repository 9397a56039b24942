"""ember.distributions: torch.distributions on ember tensors.

Parameterizable probability distributions and sampling functions (`Distribution` and its families), the
`constraints` their parameters and supports satisfy, the `transforms` between constrained spaces (with
log-det-Jacobians) and the registries `biject_to` / `transform_to` from constraints to transforms, and
`kl_divergence` with its registry. Everything matches torch 2.13: values, shapes, argument validation and its
error messages; `rsample` is differentiable; after the same seed, `sample()` draws torch's numbers wherever
the underlying stream is torch-exact (NOTE [ Which samplers match torch's stream ] in ember/_generator.py).
"""

from . import constraints as constraints
from . import transforms as transforms
from .bernoulli import Bernoulli as Bernoulli
from .beta import Beta as Beta
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .cauchy import Cauchy as Cauchy
from .chi2 import Chi2 as Chi2
from .constraint_registry import biject_to as biject_to
from .constraint_registry import transform_to as transform_to
from .continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from .dirichlet import Dirichlet as Dirichlet
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .exponential import Exponential as Exponential
from .fishersnedecor import FisherSnedecor as FisherSnedecor
from .gamma import Gamma as Gamma
from .generalized_pareto import GeneralizedPareto as GeneralizedPareto
from .geometric import Geometric as Geometric
from .gumbel import Gumbel as Gumbel
from .half_cauchy import HalfCauchy as HalfCauchy
from .half_normal import HalfNormal as HalfNormal
from .independent import Independent as Independent
from .inverse_gamma import InverseGamma as InverseGamma
from .kl import _add_kl_info
from .kl import kl_divergence as kl_divergence
from .kl import register_kl as register_kl
from .kumaraswamy import Kumaraswamy as Kumaraswamy
from .laplace import Laplace as Laplace
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .log_normal import LogNormal as LogNormal
from .logistic_normal import LogisticNormal as LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal as LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough
from .pareto import Pareto as Pareto
from .poisson import Poisson as Poisson
from .relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical as RelaxedOneHotCategorical
from .studentT import StudentT as StudentT
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform as Uniform
from .von_mises import VonMises as VonMises
from .weibull import Weibull as Weibull
from .wishart import Wishart as Wishart

__all__ = [
    "Beta",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "InverseGamma",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "MixtureSameFamily",
    "Normal",
    "Pareto",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "biject_to",
    "transform_to",
]
__all__ += [
    "Bernoulli", "Binomial", "Categorical", "Geometric", "LKJCholesky", "LowRankMultivariateNormal",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "Wishart", "kl_divergence", "register_kl"
]
__all__.extend(transforms.__all__)

_add_kl_info()  # kl_divergence's docstring lists the registered pairs, as torch's does
del _add_kl_info
