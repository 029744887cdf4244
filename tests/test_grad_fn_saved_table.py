"""A table of ops (``OPS``) whose node reads as PyTorch's: its name, and which ``_saved_<name>`` attributes
``dir(grad_fn)`` lists with each value (a tensor by shape and dtype, a number or tuple as it is), compared with
PyTorch's on the same inputs. (tests/test_grad_fn_saved_attributes.py compares the saved tensors' values too.)"""

import warnings

import numpy as np
import pytest
import torch

import ember

OPS = [
    'L.real(L.complex(m, m))', 'L.imag(L.complex(x, x))', 'L.complex(m, m).real', 'L.complex(x, m).imag',
    'm.abs().lgamma()', 'L.special.digamma(m)', 'L.polygamma(0, m)', 'L.special.polygamma(2, m)', 'm.polygamma(1)',
    'm.abs()', 'm.acos()', 'm.asin()', 'm.atan()', 'm.sinh()', 'm.cosh()', 'm.asinh()', 'm.exp2()', 'm.expm1()',
    'm.log2()', 'm.log10()', 'm.log1p()', 'm.neg()', 'm.sign()', 'm.trunc()', 'm.floor()', 'm.ceil()', 'm.round()',
    'm.frac()', 'm.erf()', 'm.erfc()', 'm.erfinv()', 'm.square()', 'm.tan()', 'm.deg2rad()', 'm.rad2deg()',
    'm.angle()', 'm.sinc()', 'm.fmod(2)', 'm.remainder(2)', 'm.fmod(m)', 'm.remainder(m)', 'm.hypot(m)',
    'm.maximum(m)', 'm.lerp(m,0.5)', 'm.lerp(m,m)', 'm.copysign(m)', 'm.true_divide(m)', 'm.mean()', 'm.sum()',
    'm.amax()', 'm.max()', 'm.min()', 'm.logsumexp(0)', 'm.var()', 'm.std()', 'm.norm()', 'm.cumsum(0)',
    'm.cumprod(0)', 'm.cummax(0)[0]', 'm.cummin(0)[0]', 'm.logcumsumexp(0)', 'm.sort()[0]', 'm.argsort().float()',
    'm.topk(2)[0]', 'm.kthvalue(2)[0]', 'm.msort()', 'm.t()', 'm.T', 'm.mT', 'm.mH', 'm.H', 'm.adjoint()',
    'm.conj()', 'm.flatten()', 'm.ravel()', 'm.reshape(3,4)', 'm.view(12)', 'm.view(-1,2)', 'm.unsqueeze(0)',
    'm.squeeze()', 'm.expand(2,4,3)', 'm.repeat(2,1)', 'm.tile(2)', 'm.flip(0)', 'm.fliplr()', 'm.flipud()',
    'm.roll(1)', 'm.narrow(0,1,2)', 'm.select(0,1)', 'm[1]', 'm[1:3]', 'm[:,None]', 'm.diag()', 'm.diagonal()',
    'm.tril()', 'm.triu()', 'm.diagonal(-1)', 'm.tril(-1)', 'm.triu(-2)', 'm.trace()', 'm.movedim(0,1)', 'm.swapdims(0,1)', 'm.unfold(0,2,1)', 'm.chunk(2)[0]',
    'm.split(2)[0]', 'm.unbind()[0]', 'm.clone()', 'm.contiguous()', 'm.t().contiguous()',
    'm.detach().requires_grad_().float()', 'm.double()', 'm.half()', 'm.to(torch_or_ember.float64)',
    'm.type_as(x.double())', 'm.masked_fill(m>0,1.0)', 'm.masked_scatter(m>0,m*2)',
    'm.index_fill(0,L.tensor([1]),2.0)', 'm.index_add(0,L.tensor([1]),m[:1])', 'm.index_copy(0,L.tensor([1]),m[:1])',
    'm.take(L.tensor([1]))', 'm.gather(1,L.tensor([[0]]))', 'm.scatter(1,L.tensor([[0]]),m[:1,:1])',
    'm.scatter_add(1,L.tensor([[0]]),m[:1,:1])', 'm.clamp(0,1)', 'm.clip(0,1)', 'm.where(m>0,x)',
    'L.where(m>0,m,0.0)', 'm.pow(m)', 'm.float_power(2)', 'm.addcmul(m,m)', 'm.addcdiv(m,m)', 'm@x', 'L.matmul(x,x)',
    'L.tensordot(m,s,1)', 'L.kron(x,x)', 'L.cartesian_prod(x,x)', 'L.block_diag(m,x[None])', 'L.cat([m,m])',
    'L.stack([m,m])', 'L.hstack([m,m])', 'L.vstack([m,m])', 'L.dstack([m,m])', 'L.column_stack([m,m])',
    'L.broadcast_to(x,(2,3))', "L.meshgrid(x,x,indexing='ij')[0]", 'L.tril_indices(2,2).float()', 'L.diff(m)',
    'L.cov(m)', 'L.corrcoef(m)', 'L.histc(m.detach()).requires_grad_()', 'L.polar(x.abs(),x)', 'L.linalg.pinv(m)',
    'L.linalg.matrix_norm(m)', 'L.linalg.norm(m)', 'L.linalg.vector_norm(m)', 'L.linalg.matrix_exp(s)',
    'L.logdet(s@s.T+3*L.eye(3))', 'F.relu(m)', 'F.relu6(m)', 'F.elu(m)', 'F.selu(m)', 'F.celu(m)', 'F.gelu(m)',
    'F.silu(m)', 'F.mish(m)', 'F.softplus(m)', 'F.hardtanh(m)', 'F.hardswish(m)', 'F.hardsigmoid(m)',
    'F.logsigmoid(m)', 'F.leaky_relu(m)', 'F.rrelu(m)', 'F.prelu(m,x[:1])', 'F.glu(m[:, :2])',
    'F.threshold(m,0.1,2.0)', 'F.softmax(m,0)', 'F.log_softmax(m,1)', 'F.softmin(m,0)', 'F.gumbel_softmax(m)',
    'F.dropout(m,0.0)', 'F.alpha_dropout(m,0.0,training=True)', 'F.feature_alpha_dropout(c,0.0,training=True)',
    'F.bilinear(m,m,s[None])', 'F.embedding(L.tensor([0,1]),m)', 'F.one_hot(L.tensor([0,1])).float()',
    'F.avg_pool1d(c,2)', 'F.max_pool1d(c,2)', 'F.adaptive_avg_pool1d(c,2)', 'F.adaptive_max_pool1d(c,2)[0]',
    'F.lp_pool1d(c,2,2)', 'F.layer_norm(m,(3,))', 'F.instance_norm(i)',
    'F.local_response_norm(i,2)', 'F.cosine_similarity(m,m)', 'F.mse_loss(m,m.detach())', 'F.l1_loss(m,m.detach())',
    'F.smooth_l1_loss(m,m.detach())', 'F.huber_loss(m,m.detach())', 'F.cross_entropy(m,L.tensor([0,1,2,0]))',
    'F.nll_loss(m,L.tensor([0,1,2,0]))', 'F.kl_div(m,m.detach())',
    'F.binary_cross_entropy(m.sigmoid(),m.detach().sigmoid())', 'F.binary_cross_entropy_with_logits(m,m.detach())',
    'F.multilabel_soft_margin_loss(m,m.detach())', 'F.margin_ranking_loss(x,x,x.detach())',
    'F.hinge_embedding_loss(m,m.detach())', 'F.cosine_embedding_loss(m,m,L.ones(4))',
    'F.poisson_nll_loss(m,m.detach())', 'F.gaussian_nll_loss(m,m.detach(),m.detach().abs())',
    'F.triplet_margin_loss(m,m,m)',
    'F.ctc_loss(m.log_softmax(1)[:,None],L.tensor([[1]]),L.tensor([4]),L.tensor([1]))',
    'F.softmax(m,dtype=torch_or_ember.float64,dim=0)', 'L.special.sinc(m)', 'L.special.expit(m)',
    'L.special.log1p(m.abs())', 'L.fft.fftshift(m)', 'L.view_as_real(L.complex(m,m))', 'L.complex(m,m).abs()',
    'L.stft(x.repeat(10),4,return_complex=True).abs()', 'L.nn.functional.embedding(L.tensor([0,3]),m,max_norm=1.0)',
    'L.cumsum(m,dim=1)', 'L.clamp_min(m,0)', 'L.clamp_max(m,0)', 'L.heaviside(m,m).float()',
    'L.nn.functional.hardtanh(m,0,1)', 'L.addbmm(m,m[None],s[None])', 'L.baddbmm(m[None],m[None],s[None])',
    'L.addmv(x,s,x)', 'L.addr(s,x,x)', 'L.bucketize(m.detach(),x.detach()).float()',
    'L.searchsorted(x.detach().sort()[0],m.detach()).float()',
]


def _inputs(lib):
    g = np.random.default_rng(0)
    shapes = {"m": (4, 3), "x": (3,), "s": (3, 3), "c": (1, 2, 5), "i": (1, 2, 4, 4)}
    return {k: lib.tensor(g.standard_normal(v).astype(np.float32), requires_grad=True) for k, v in shapes.items()}


def _describe(value):
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return "tensor", tuple(value.shape), str(value.dtype).rpartition(".")[2]
    return value


def _node(lib, op):
    """The name of the node of ``op`` (None without one) and its ``_saved_<name>`` attributes described."""
    env = dict(_inputs(lib), L=lib, F=lib.nn.functional, torch_or_ember=lib)
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn = eval(op, env).grad_fn
    if fn is None:
        return None
    return fn.name(), {n: _describe(getattr(fn, n)) for n in sorted(dir(fn)) if n.startswith("_saved_")}


@pytest.mark.parametrize("op", OPS)
def test_node_name_and_saved_attributes_as_torch(op):
    assert _node(ember, op) == _node(torch, op)
