"""ONNX export against torch's: the same model built in both from the same weights, exported with the same
options. Each ember export passes onnx.checker, runs in onnxruntime with outputs equal to ember's eager
outputs (at the traced sizes and, with dynamic axes, at other sizes), and uses only operators torch's
export of the same model uses (shape plumbing aside), including each model's characteristic one."""

import io
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import ember

# ops that only move shapes around: exports may differ in how they compute a Reshape's target
PLUMBING = {"Constant", "Shape", "Gather", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Identity", "Cast",
            "ConstantOfShape", "Transpose", "Slice", "Expand", "Range", "Div", "Sqrt", "Mul", "Add", "Mod",
            "Equal", "Where", "Trilu", "Not", "Erf", "Sub", "Softplus"}


def build(L, name):
    nn = L.nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    if name == "cnn":
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 6, 3, stride=2, padding=(1, 0)), nn.AvgPool2d(2, ceil_mode=True),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3), nn.LogSoftmax(1))
    if name == "lstm":
        return nn.LSTM(4, 6, num_layers=2, batch_first=True)
    if name == "gru":
        return nn.GRU(4, 6)
    if name == "rnn":
        return nn.RNN(4, 5, nonlinearity="relu")
    if name == "transformer":
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
                                     enable_nested_tensor=False)
    if name == "embedding_gelu":
        return nn.Sequential(nn.Embedding(20, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 8), nn.SiLU(),
                             nn.Softmax(-1))
    if name in ("gpt", "mnist"):  # the models of examples/, as their scripts build them
        return _example(name, L)
    raise KeyError(name)


def _example(name, L):
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", name, "main.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # the scripts import ember as torch; their classes take the library from there
    if L is torch:  # torch's twin: the same source with `torch` for `ember`
        src = open(path).read().replace("import ember as torch", "import torch").replace("ember.", "torch.")
        mod = type(mod)(f"example_{name}_torch")
        mod.__file__ = path
        exec(compile(src, path, "exec"), mod.__dict__)
    return mod.GPT(40, block=16, d_model=32, heads=4, layers=2) if name == "gpt" else mod.Net()


R = np.random.default_rng(0)
MASK = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
CASES = {  # name: (inputs, input names, dynamic axes, inputs at other sizes, torch's characteristic op)
    "mlp": ([R.standard_normal((2, 8), np.float32)], ["x"], {"x": {0: "batch"}},
            [R.standard_normal((5, 8), np.float32)], "Gemm"),
    "cnn": ([R.standard_normal((2, 1, 12, 12), np.float32)], ["x"], {"x": {0: "batch"}},
            [R.standard_normal((3, 1, 12, 12), np.float32)], "Conv"),
    "lstm": ([R.standard_normal((2, 5, 4), np.float32)], ["x"], {"x": {0: "batch", 1: "time"}},
             [R.standard_normal((3, 7, 4), np.float32)], "LSTM"),
    "gru": ([R.standard_normal((5, 2, 4), np.float32)], ["x"], {"x": [0, 1]},
            [R.standard_normal((3, 4, 4), np.float32)], "GRU"),
    "rnn": ([R.standard_normal((5, 2, 4), np.float32)], ["x"], None, None, "RNN"),
    "transformer": ([R.standard_normal((2, 5, 8), np.float32), MASK], ["src", "mask"], {"src": {0: "batch"}},
                    [R.standard_normal((4, 5, 8), np.float32), MASK], "LayerNormalization"),
    "embedding_gelu": ([R.integers(0, 20, (2, 3))], ["idx"], {"idx": {0: "b", 1: "t"}},
                       [R.integers(0, 20, (4, 6))], "Gather"),
    "gpt": ([R.integers(0, 40, (2, 9))], ["idx"], {"idx": {0: "b", 1: "t"}}, [R.integers(0, 40, (3, 14))],
            "LayerNormalization"),
    "mnist": ([R.standard_normal((2, 1, 28, 28), np.float32)], ["x"], {"x": {0: "b"}},
              [R.standard_normal((5, 1, 28, 28), np.float32)], "Conv"),
}


def models(name):
    tm = build(torch, name).eval()
    em = build(ember, name).eval()
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return em, tm


def export(lib, model, inputs, names, dynamic_axes, **kw):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.onnx.export(model, tuple(lib.from_numpy(a) for a in inputs), f, input_names=names,
                        dynamic_axes=dynamic_axes, **({"dynamo": False} if lib is torch else {}), **kw)
    return f.getvalue()


def run(model_bytes, inputs):
    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), inputs)})


def eager(model, inputs):
    with ember.no_grad():
        out = model(*[ember.from_numpy(a) for a in inputs])
    flat = []

    def walk(o):
        if isinstance(o, (tuple, list)):
            for e in o:
                walk(e)
        else:
            flat.append(o.numpy())
    walk(out)
    return flat


def op_types(model_bytes):
    return {n.op_type for n in onnx.load_from_string(model_bytes).graph.node}


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_runs_in_onnxruntime_and_uses_torchs_operators(name):
    inputs, names, dynamic_axes, other, key_op = CASES[name]
    em, tm = models(name)
    mine = export(ember, em, inputs, names, dynamic_axes)
    theirs = export(torch, tm, inputs, names, dynamic_axes)
    onnx.checker.check_model(onnx.load_from_string(mine), full_check=True)
    for args in [inputs] + ([other] if other is not None else []):
        for got, want in zip(run(mine, args), eager(em, args)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert key_op in op_types(mine) and key_op in op_types(theirs)
    # ember computes a Linear on 3-d input as one Gemm on the flattened rows where torch writes MatMul + Add
    theirs_ops = op_types(theirs) | ({"Gemm"} if "MatMul" in op_types(theirs) else set())
    assert op_types(mine) - PLUMBING <= theirs_ops - PLUMBING


def test_mlp_graph_is_torchs_node_for_node():
    em, tm = models("mlp")
    inputs, names, axes, _, _ = CASES["mlp"]
    mine, theirs = (onnx.load_from_string(export(lib, m, inputs, names, axes, output_names=["y"]))
                    for lib, m in ((ember, em), (torch, tm)))

    def summary(p):
        g = p.graph
        return ([(n.name, n.op_type, list(n.input), list(n.output),
                  sorted((a.name, onnx.helper.get_attribute_value(a)) for a in n.attribute)) for n in g.node],
                [i.name for i in g.initializer], [str(i.type) for i in g.input], [str(o.type) for o in g.output])
    assert summary(mine) == summary(theirs)


@pytest.mark.parametrize("opset", [17, 18, 20, 23, 25, 28])
def test_opsets(opset):
    inputs, names, axes, other, _ = CASES["transformer"]
    em, _ = models("transformer")
    model_bytes = export(ember, em, inputs, names, axes, opset_version=opset)
    assert onnx.load_from_string(model_bytes).opset_import[0].version == opset
    for got, want in zip(run(model_bytes, other), eager(em, other)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_options_params_folding_training_and_names():
    em, tm = models("mlp")
    inputs, names, _, _, _ = CASES["mlp"]
    # export_params=False: the parameters are graph inputs after the model's own
    p = onnx.load_from_string(export(ember, em, inputs, names, None, export_params=False))
    assert [i.name for i in p.graph.input] == ["x", "0.weight", "0.bias", "2.weight", "2.bias"]
    assert not p.graph.initializer
    # keep_initializers_as_inputs lists them as inputs too, as torch does
    p = onnx.load_from_string(export(ember, em, inputs, names, None, keep_initializers_as_inputs=True))
    assert [i.name for i in p.graph.input][1:] == [i.name for i in p.graph.initializer]
    # training mode: batch norm uses batch statistics (BatchNormalization in training mode), no Conv fusion
    ec, tc = models("cnn")
    ec.train()
    cin = CASES["cnn"][0]
    p_bytes = export(ember, ec, cin, ["x"], None, training=ember.onnx.TrainingMode.TRAINING)
    assert "BatchNormalization" in op_types(p_bytes) and ec.training
    with ember.no_grad():
        ec.train()
        want = ec(ember.from_numpy(cin[0])).numpy()
    np.testing.assert_allclose(run(p_bytes, cin)[0], want, rtol=1e-4, atol=1e-5)
    # eval mode (the default) restores the model's mode afterwards and folds BN into the convolution
    assert "BatchNormalization" not in op_types(export(ember, ec, cin, ["x"], None)) and ec.training
    # no constant folding: the weight's transpose stays in the graph
    assert "Transpose" in op_types(export(ember, em, inputs, names, None, do_constant_folding=False))


def test_custom_symbolic_and_unsupported_errors():
    class M(ember.nn.Module):
        def forward(self, x):
            return ember.linalg.qr(x)[0]
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError,
                       match="Exporting the operator 'aten::linalg_qr' to ONNX opset version 20 is not supported"):
        ember.onnx.export(M(), (ember.randn(3, 3),), io.BytesIO())

    def relu_as_clip(g, x):
        return g.op("Clip", x, g.op("Constant", value_t=onnx.numpy_helper.from_array(np.array(0, np.float32))))
    ember.onnx.register_custom_op_symbolic("aten::relu", relu_as_clip, 17)
    try:
        em, _ = models("mlp")
        model_bytes = export(ember, em, CASES["mlp"][0], ["x"], None)
        assert "Clip" in op_types(model_bytes) and "Relu" not in op_types(model_bytes)
        np.testing.assert_allclose(run(model_bytes, CASES["mlp"][0])[0], eager(em, CASES["mlp"][0])[0], atol=1e-6)
    finally:
        ember.onnx.unregister_custom_op_symbolic("aten::relu", 17)
    with pytest.raises(RuntimeError, match="Unsupported onnx_opset_version: 30"):
        ember.onnx.export(ember.nn.Linear(2, 2), (ember.randn(1, 2),), io.BytesIO(), opset_version=30)
    with pytest.raises(ember.onnx.OnnxExporterError, match="symbolic name must match the format domain::name"):
        ember.onnx.register_custom_op_symbolic("relu", relu_as_clip, 17)


def test_dynamo_true_returns_a_program_and_is_in_onnx_export(tmp_path):
    seen = []

    class M(ember.nn.Module):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return x.exp()
    program = ember.onnx.export(M(), (ember.ones(2),), dynamo=True)
    assert isinstance(program, ember.onnx.ONNXProgram) and seen == [True] and not ember.onnx.is_in_onnx_export()
    program.save(str(tmp_path / "m.onnx"))
    assert onnx.load(str(tmp_path / "m.onnx")).graph.node[0].op_type == "Exp"
    np.testing.assert_allclose(program(ember.zeros(2))[0].numpy(), np.ones(2))


def test_dynamic_axes_that_data_decides_fail_with_the_call():
    class M(ember.nn.Module):
        def forward(self, x):
            return x.sum() if x.shape[0] % 2 else x.exp()  # a Python branch on the size
    with pytest.raises(ember.onnx.errors.SymbolicValueError, match="runs different ops when dynamic axis 'b'"):
        ember.onnx.export(M(), (ember.ones(2),), io.BytesIO(), input_names=["x"], dynamic_axes={"x": {0: "b"}})
