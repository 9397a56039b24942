"""nn.utils against torch: parameters_to_vector / vector_to_parameters, fuse_conv_bn_eval."""

import numpy as np
import torch
from _harness import pair, run_pair
from compare import assert_same, to_ember

import ember


def test_parameters_to_vector_round_trip():
    e, t = pair("Conv2d", (2, 3, 3))
    ev, tv = ember.nn.utils.parameters_to_vector(e.parameters()), torch.nn.utils.parameters_to_vector(t.parameters())
    assert_same(ev, tv)
    new = np.arange(tv.numel(), dtype=np.float32)
    ember.nn.utils.vector_to_parameters(to_ember(new), e.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new), t.parameters())
    for (n, ep), (_, tp) in zip(e.named_parameters(), t.named_parameters()):
        assert_same(ep, tp, path=n)


def test_fuse_conv_bn_eval():
    ec, tc = pair("Conv2d", (3, 4, 3), {"padding": 1})
    eb, tb = pair("BatchNorm2d", (4,))
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    run_pair(eb, tb, [np.random.default_rng(1).standard_normal((4, 4, 2, 2)).astype(np.float32)], grad=False)
    for m in (ec, tc, eb, tb):
        m.eval()
    ef = ember.nn.utils.fuse_conv_bn_eval(ec, eb)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb)
    run_pair(ef, tf, [x], rtol=1e-4, atol=1e-5)
    assert_same(ef(to_ember(x)), tb(tc(torch.from_numpy(x))), rtol=1e-4, atol=1e-5, check_stride=False)
