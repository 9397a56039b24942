"""Summary protos, as `torch.utils.tensorboard.summary` builds them.

Most builders (histogram, image, video, text, pr_curve, custom_scalars) are tensorboardX's,
which torch's were derived from and which write the same protos; they take NumPy arrays, so every value
passes through `make_np` first. Written here are those whose torch form tensorboardX lacks: scalars with
`new_style` (a tensor summary for the scalars plugin), `tensor_proto`, `hparams` with
`hparam_domain_discrete`, `audio` (WAV through the stdlib, where tensorboardX needs soundfile), and `mesh`
(tensorboard's instance names and component bitmask).
"""

from __future__ import annotations

import logging

import numpy as np
from tensorboardX import summary as _tbx
from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboardX.proto.tensor_pb2 import TensorProto
from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

logger = logging.getLogger(__name__)

__all__ = ["make_np", "scalar", "tensor_proto", "hparams", "histogram", "histogram_raw", "image",
           "image_boxes", "video", "audio", "text", "pr_curve", "pr_curve_raw", "mesh", "custom_scalars"]


def make_np(x):
    """A NumPy array from an ember tensor, a NumPy array, a Python number or a list (as torch's make_np)."""
    from ... import Tensor

    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, list):
        return np.array(x)
    if np.isscalar(x):
        return np.array([x])
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A scalar summary: `simple_value`, or with `new_style` a one-element tensor for the scalars plugin."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). "
                             f"Was given size: {tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


# ember dtype name -> (proto dtype, proto field, NumPy -> list of field values)
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", lambda a: a.astype(np.float16).view(np.uint16).ravel().tolist()),
    "bfloat16": ("DT_BFLOAT16", "half_val", lambda a: _bfloat16_bits(a)),
    "float32": ("DT_FLOAT", "float_val", lambda a: a.ravel().tolist()),
    "float": ("DT_FLOAT", "float_val", lambda a: a.ravel().tolist()),
    "float64": ("DT_DOUBLE", "double_val", lambda a: a.ravel().tolist()),
    "double": ("DT_DOUBLE", "double_val", lambda a: a.ravel().tolist()),
    "int8": ("DT_INT8", "int_val", lambda a: a.ravel().tolist()),
    "uint8": ("DT_UINT8", "int_val", lambda a: a.ravel().tolist()),
    "int16": ("DT_INT16", "int_val", lambda a: a.ravel().tolist()),
    "int32": ("DT_INT32", "int_val", lambda a: a.ravel().tolist()),
    "int64": ("DT_INT64", "int64_val", lambda a: a.ravel().tolist()),
    "complex64": ("DT_COMPLEX64", "scomplex_val", lambda a: np.stack([a.real, a.imag], -1).ravel().tolist()),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", lambda a: np.stack([a.real, a.imag], -1).ravel().tolist()),
    "bool": ("DT_BOOL", "bool_val", lambda a: a.ravel().tolist()),
}


def _bfloat16_bits(a):
    return (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).ravel().tolist()


def tensor_proto(tag, tensor):
    """A whole tensor as a summary for TensorBoard's tensor plugin (`add_tensor`)."""
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    key = str(tensor.dtype).rsplit(".", 1)[-1]
    if key not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, convert = _TENSOR_FIELDS[key]
    array = tensor.detach().float().numpy() if key == "bfloat16" else tensor.detach().numpy()
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in tensor.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape, **{field: convert(array)})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def _hparam_value(k, v, discrete, ssi):
    """Record one hyperparameter in the session-start info; return its HParamInfo."""
    from google.protobuf import struct_pb2
    from tensorboardX.proto.api_pb2 import DataType, HParamInfo

    from ... import Tensor

    if isinstance(v, Tensor):
        ssi.hparams[k].number_value = make_np(v).reshape(-1)[0]
        return HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"))
    # torch tests numbers first, and True is an int, so a bool is logged as a number; the same order here
    if isinstance(v, (int, float)):
        kind, field, proto = "DATA_TYPE_FLOAT64", "number_value", "number_value"
    elif isinstance(v, str):
        kind, field, proto = "DATA_TYPE_STRING", "string_value", "string_value"
    elif isinstance(v, bool):
        kind, field, proto = "DATA_TYPE_BOOL", "bool_value", "bool_value"
    else:
        raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
    setattr(ssi.hparams[k], field, v)
    domain = None
    if k in discrete:
        domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{proto: d}) for d in discrete[k]])
    return HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain)


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of TensorBoard's hparams plugin: experiment, session start, session end."""
    from tensorboardX.proto.api_pb2 import Experiment, MetricInfo, MetricName, Status
    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    for name, d in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(d, dict):
            logger.warning("parameter: %s should be a dictionary, nothing logged.", name)
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k]))
                                                                      for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    ssi = SessionStartInfo()
    infos = [_hparam_value(k, v, discrete, ssi) for k, v in hparam_dict.items() if v is not None]

    def plugin_summary(tag, **content):
        data = HParamsPluginData(version=0, **content).SerializeToString()
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="hparams", content=data))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])

    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k))
                                                             for k in metric_dict])
    return (plugin_summary("_hparams_/experiment", experiment=experiment),
            plugin_summary("_hparams_/session_start_info", session_start_info=ssi),
            plugin_summary("_hparams_/session_end_info",
                           session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


def histogram(name, values, bins, max_bins=None):
    return _tbx.histogram(name, make_np(values), bins, max_bins=max_bins)


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002
    return _tbx.histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    return _tbx.image(tag, make_np(tensor), rescale=rescale, dataformats=dataformats)


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    return _tbx.image_boxes(tag, make_np(tensor_image), make_np(tensor_boxes), rescale=rescale,
                            dataformats=dataformats, labels=labels)


def video(tag, tensor, fps=4):
    return _tbx.video(tag, make_np(tensor), fps=fps)


def audio(tag, tensor, sample_rate=44100):
    """A mono clip as 16-bit WAV (the stdlib's `wave`, as torch; tensorboardX's needs soundfile)."""
    import io
    import wave

    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (array * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                         encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def text(tag, text):
    return _tbx.text(tag, text)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    weights = None if weights is None else make_np(weights)
    return _tbx.pr_curve(tag, make_np(labels), make_np(predictions), num_thresholds, weights)


def pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                 false_negative_counts, precision, recall, num_thresholds=127, weights=None):
    counts = [make_np(c) for c in (true_positive_counts, false_positive_counts, true_negative_counts,
                                   false_negative_counts, precision, recall)]
    return _tbx.pr_curve_raw(tag, *counts, num_thresholds=num_thresholds, weights=weights)


def _varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def mesh(tag, vertices, colors, faces, config_dict=None, display_name=None, description=None):
    """A mesh or point cloud: one float tensor summary per part (vertices, faces, colors) for the mesh plugin."""
    import json

    from tensorboardX.proto.plugin_mesh_pb2 import MeshPluginData

    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(make_np(t), kind) for t, kind in ((vertices, "VERTEX"), (faces, "FACE"), (colors, "COLOR"))
             if t is not None]
    components = 0
    for _, kind in parts:
        components |= 1 << MeshPluginData.ContentType.Value(kind)
    values = []
    for array, kind in parts:
        if array.ndim != 3:
            raise ValueError(f"Tensor shape should be of shape BxNx3, but got {list(array.shape)}.")
        data = MeshPluginData(version=0, name=tag, content_type=MeshPluginData.ContentType.Value(kind),
                              json_config=config, shape=array.shape).SerializeToString()
        # tensorboardX's copy of the proto predates field 7, `components` (the bitmask of the parts
        # present), which tensorboard's mesh plugin reads: append it in protobuf's wire format
        data += b"\x38" + _varint(components)
        meta = SummaryMetadata(display_name=display_name, summary_description=description,
                               plugin_data=SummaryMetadata.PluginData(plugin_name="mesh", content=data))
        proto = TensorProto(dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in array.shape]))
        values.append(Summary.Value(tag=f"{tag}_{kind}", tensor=proto, metadata=meta))
    return Summary(value=values)


def custom_scalars(layout):
    return _tbx.custom_scalars(layout)
