"""`SummaryWriter`: writes what a training script logs as TensorBoard event files.

The same class, arguments and files as `torch.utils.tensorboard.SummaryWriter`: each `add_*` builds a
Summary proto (`summary.py`) and hands it to a `FileWriter`, which queues events and appends them to
`events.out.tfevents.<time>.<host>` in TFRecord framing on a background thread.

# NOTE [ TensorBoard on tensorboardX ]
torch's writer is built on the `tensorboard` package (its protos and record writer, ~20 MB with its
server). ember writes with tensorboardX instead (DESIGN.md §6): a small package with the same protos and
the same event-file writer, and the builders torch's summaries were derived from. Reading the files back is
tensorboard's job, and the tests do it with tensorboard's own reader and server.
"""

from __future__ import annotations

import itertools
import os
import time

from tensorboardX.embedding import append_pbtxt, make_mat, make_tsv
from tensorboardX.proto.event_pb2 import Event, SessionLog
from tensorboardX.utils import figure_to_image, make_grid
from tensorboardX.writer import FileWriter as _TbxFileWriter

from .summary import (
    audio,
    custom_scalars,
    histogram,
    histogram_raw,
    hparams,
    image,
    image_boxes,
    make_np,
    mesh,
    pr_curve,
    pr_curve_raw,
    scalar,
    tensor_proto,
    text,
    video,
)

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]


class RecordWriter:
    """Writes records to a file object in TFRecord framing, as event files hold them: the length, its
    masked CRC-32C, the bytes, their masked CRC-32C (tensorboard's `RecordWriter(writer)`)."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, data: bytes):
        import struct

        from tensorboardX.record_writer import masked_crc32c

        header = struct.pack("<Q", len(data))
        self._writer.write(header + struct.pack("<I", masked_crc32c(header)) + data +
                           struct.pack("<I", masked_crc32c(data)))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


_file_ids = itertools.count()


class FileWriter(_TbxFileWriter):
    """Writes Event protos to one event file in `log_dir` (torch's `FileWriter`, positional `log_dir`).

    The file is `events.out.tfevents.<time>.<host>.<pid>.<n><filename_suffix>`, as torch names it:
    tensorboardX's own name stops at the host, so two writers opened on one directory within the same
    second (a writer closed and reopened, `add_hparams` runs) would write the same file.
    """

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        unique = f".{os.getpid()}.{next(_file_ids)}{filename_suffix}"
        super().__init__(str(log_dir), max_queue, flush_secs, unique)


def _no_grad():
    from ... import no_grad

    return no_grad()


def _default_bins():
    """TensorBoard's default histogram buckets: +-1e-12 growing by 1.1x up to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


class SummaryWriter:
    """Writes entries to event files in `log_dir` for TensorBoard to read.

    Args:
        log_dir (str): where to write; default ``runs/CURRENT_DATETIME_HOSTNAME``.
        comment (str): suffix of the default `log_dir`; ignored when `log_dir` is given.
        purge_step (int): on a resumed run, events after this step are hidden by TensorBoard.
        max_queue (int): pending events before an `add_*` call forces a flush.
        flush_secs (int): how often pending events are flushed to disk.
        filename_suffix (str): suffix of the event file names.

    Example::

        >>> with SummaryWriter("runs/exp1") as w:
        ...     for step in range(100):
        ...         w.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime

            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # the writers are dropped on close and made again by the next add_*
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The main FileWriter, made (again) on first use; a purge_step marks a restart in the new file."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory event files are written to."""
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number (a Python number or a one-element tensor) under `tag` at `global_step`."""
        self._add(scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                  global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers as one chart: each goes to its own run `<log_dir>/<main_tag>_<tag>`."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs,
                                                           self.filename_suffix)
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Log a whole tensor (TensorBoard's tensor plugin)."""
        self._add(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Log the distribution of `values`; `bins` is "tensorflow" (TensorBoard's buckets) or NumPy's."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None):
        """Log a histogram from its statistics and bucket counts."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image: float values in [0, 1] or uint8 in [0, 255], laid out as `dataformats`."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images as one grid."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None, rescale=1,
                             dataformats="CHW", labels=None):
        """Log an image with boxes (N x 4: xmin, ymin, xmax, ymax) drawn on it."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != make_np(box_tensor).shape[0]:
                labels = None
        self._add(image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                              labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Log a matplotlib figure (or a list of them) as an image."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Log a video (N, T, C, H, W) as an animated GIF (needs moviepy, as torch's)."""
        self._add(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Log a mono clip (values in [-1, 1]) as WAV."""
        self._add(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log text (markdown is rendered by TensorBoard)."""
        self._add(text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log one run's hyperparameters and final metrics for the HParams tab (in a sub-run)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w_hp:
            for summary in (exp, ssi, sei):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Log points (N x D) for the Projector tab, with optional labels and thumbnail images."""
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            label_img = make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        make_mat(mat, save_path)
        append_pbtxt(metadata, label_img, logdir, subdir, global_step, tag)

    @staticmethod
    def _encode(rawstr):
        """A tag as a directory name: '%', '/' and backslash percent-escaped, as TensorBoard's projector reads."""
        return "".join(f"%{ord(c):02x}" if c in "%/\\" else c for c in rawstr)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """Log a precision-recall curve from binary labels and predicted probabilities."""
        self._add(pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        """Log a precision-recall curve from its counts."""
        self._add(pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                               false_negative_counts, precision, recall, num_thresholds, weights),
                  global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """Add a multi-line chart of `tags` to the Custom Scalars tab."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """Add a margin chart (value, lower, upper: three tags) to the Custom Scalars tab."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        """Lay out the Custom Scalars tab: {category: {title: [kind, tags]}}."""
        self._add(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None, global_step=None,
                 walltime=None):
        """Log a 3D mesh or point cloud for the Mesh tab."""
        self._add(mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Log the model's graph for the Graphs tab: its ops, grouped by module, from one run on
        `input_to_model` (a tensor or a tuple of them). See `_graph.py`."""
        from ._graph import graph

        with _no_grad():
            graph_def = graph(model, input_to_model if input_to_model is not None else (), verbose)
        self._get_file_writer().add_event(Event(graph_def=graph_def.SerializeToString()))

    def add_onnx_graph(self, prototxt):
        """Log the graph of an ONNX model file for the Graphs tab."""
        from tensorboardX.onnx_graph import load_onnx_graph

        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    def flush(self):
        """Write pending events of every run to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every event file (a later add_* opens new ones)."""
        if self.all_writers is None:
            return  # closing twice is allowed
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _make_sprite(label_img, save_path):
    """The Projector's sprite as torch's writer makes it: the images in a grid of ceil(sqrt(N)) columns, in a square
    canvas padded below with black. (tensorboardX's `make_sprite` pads with an uninitialised array, so its padding
    is whatever memory it got.)"""
    import math

    import numpy as np
    from PIL import Image

    grid = make_grid(label_img, ncols=math.ceil(label_img.shape[0] ** 0.5)).transpose(1, 2, 0)  # HWC
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0]] = grid
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(os.path.join(save_path, "sprite.png"))
