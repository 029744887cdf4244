"""``ember.utils.tensorboard``: PyTorch's ``SummaryWriter``, writing TensorBoard event files.

The event files are written by tensorboardX (``pip install "ember[tensorboard]"``), a well-kept writer of
TensorBoard's format that needs no TensorFlow; TensorBoard reads them as it reads PyTorch's. ember's class
keeps PyTorch's signatures (``log_dir``, ``add_hparams(..., hparam_domain_discrete, run_name)``) and turns
ember tensors into NumPy arrays before they are written, so every ``add_*`` takes what PyTorch's takes.

Differences from PyTorch: ``add_graph`` reads the model's graph from autograd rather than PyTorch's JIT trace, so
its nodes are the differentiable operations (``_graph.py``); ``add_audio`` encodes its WAV with Python's ``wave``
module as PyTorch's does (tensorboardX's needs the soundfile package); the rest of the ``add_*`` methods are
tensorboardX's, which PyTorch's were derived from, with PyTorch's tags (tensorboardX's summaries of scalars,
histograms, images and videos replace characters such as spaces and brackets in a tag: ember writes the tag as
given, as PyTorch) and PyTorch's event file names (``events.out.tfevents.<time>.<host>.<pid>.<n>``: processes
writing to one folder in the same second write files of their own).
"""

from __future__ import annotations

import io
import itertools
import os
import time
from typing import Any

from ..._backend import xp
from ..._missing import module_getattr
from ..._tensor import Tensor

__all__ = ["SummaryWriter"]

_INSTALL_HINT = (
    "torch.utils.tensorboard.SummaryWriter in ember writes its event files with the tensorboardX package, "
    "which is not installed: pip install tensorboardX (or pip install \"ember[tensorboard]\")"
)


def _writer_base():
    try:
        from tensorboardX import SummaryWriter as base
    except ImportError as err:  # PyTorch raises ImportError at the import when its writer's package is missing
        raise ImportError(_INSTALL_HINT) from err
    return base


def _to_numpy(value: Any) -> Any:
    """``value`` with every ember Tensor in it (also inside lists, tuples and dicts) as a NumPy array."""
    if isinstance(value, Tensor):
        return value.detach().numpy()
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(isinstance(v, (Tensor, list, tuple, dict)) for v in value):
        return type(value)(_to_numpy(v) for v in value)
    return value


def _numpy_arguments(method):
    def call(self, *args, **kwargs):
        return method(self, *(_to_numpy(a) for a in args), **{k: _to_numpy(v) for k, v in kwargs.items()})

    call.__name__, call.__qualname__, call.__doc__ = method.__name__, method.__qualname__, method.__doc__
    return call


_event_files = itertools.count()  # (PyTorch's writer numbers the event files of a process: the name's last part)


def _tag_kept(summary, tag: str):
    """``summary`` (tensorboardX's, whose tag it cleaned: ``w [0]`` became ``w__0_``) under ``tag`` as given, as
    PyTorch's writer keeps it."""
    for value in summary.value:
        value.tag = tag
    return summary


def _write_through(file_writer) -> None:
    """Make ``file_writer`` (a tensorboardX ``FileWriter``) put each event in its file as its logging thread
    takes it from the queue, as PyTorch's writer does: TensorBoard then shows a running job's scalars at once,
    and a job that crashes loses none. tensorboardX opens the file with Python's default buffering, so its
    events stayed in memory until ``flush_secs`` (120 s) passed or the writer was flushed.

    The file is reopened unbuffered for appending (its first event, the file version, flushed into it first),
    under the events writer's lock so that the logging thread never writes to the old one. Writers of another
    kind (tensorboardX's S3 or GCS ones) are left as they are."""
    events = getattr(getattr(file_writer, "event_writer", None), "_ev_writer", None)
    record = getattr(events, "_py_recordio_writer", None)
    lock = getattr(events, "_lock", None)
    if lock is None or not isinstance(getattr(record, "_writer", None), io.BufferedWriter):
        return
    with lock:
        buffered = record._writer
        buffered.flush()
        record._writer = open(buffered.name, "ab", buffering=0)  # (tensorboardX closes it)
        buffered.close()


def _make_writer_class(base):
    class SummaryWriter(base):
        """Writes TensorBoard event files under ``log_dir`` (default ``runs/<date>_<host><comment>``), as
        PyTorch's ``torch.utils.tensorboard.SummaryWriter``."""

        def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                     max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
            super().__init__(logdir=log_dir, comment=comment, purge_step=purge_step, max_queue=max_queue,
                             flush_secs=flush_secs, filename_suffix=filename_suffix)

        def get_logdir(self) -> str:
            return self.logdir

        @property
        def _filename_suffix(self) -> str:
            """The suffix each new event file gets (tensorboardX reads it as it opens one): ``.<pid>.<n>`` before
            the user's ``filename_suffix``, so that the file is named as PyTorch's,
            ``events.out.tfevents.<time>.<host>.<pid>.<n><filename_suffix>``; ``n`` counts the process's files."""
            return f".{os.getpid()}.{next(_event_files)}{self._user_filename_suffix}"

        @_filename_suffix.setter
        def _filename_suffix(self, suffix: str) -> None:
            self._user_filename_suffix = suffix

        def _get_file_writer(self):
            # (tensorboardX makes the run's file writer here, again after a close: each gets PyTorch's writes)
            file_writer = super()._get_file_writer()
            _write_through(file_writer)
            return file_writer

        # PyTorch's writer keeps its arguments as attributes (``writer.log_dir`` names the run's folder)
        log_dir = property(get_logdir, doc="The folder the event files go to.")
        max_queue = property(lambda self: self._max_queue)
        flush_secs = property(lambda self: self._flush_secs)
        filename_suffix = property(lambda self: self._user_filename_suffix)

        def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None,
                        run_name: str | None = None, global_step: int | None = None) -> None:
            """As PyTorch: the hyperparameters and metrics of one run, written in a sub-directory ``run_name``
            (default: the current time) of ``log_dir``; ``hparam_domain_discrete`` lists the values a
            hyperparameter can take (TensorBoard shows them as a discrete filter)."""
            if type(hparam_dict) is not dict or type(metric_dict) is not dict:
                raise TypeError("hparam_dict and metric_dict should be dictionary.")
            hparam_dict, metric_dict = _to_numpy(hparam_dict), _to_numpy(metric_dict)
            from tensorboardX.summary import hparams

            experiment, start, end = hparams(_hparam_values(hparam_dict), metric_dict)
            if hparam_domain_discrete:
                _set_discrete_domains(experiment, hparam_dict, hparam_domain_discrete)
            run_dir = os.path.join(self.logdir, run_name or str(time.time()))
            with type(self)(log_dir=run_dir) as run_writer:
                for summary in (experiment, start, end):
                    run_writer.file_writer.add_summary(summary)
                for tag, value in metric_dict.items():
                    run_writer.add_scalar(tag, value, global_step)

        def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                       walltime: float | None = None, new_style: bool = False, double_precision: bool = False) -> None:
            """As PyTorch: one value under ``tag``, written as it is (tensorboardX's writer would replace characters
            such as spaces and brackets). ``new_style`` writes it as the scalars plugin's tensor (a float, or with
            ``double_precision`` a double) instead of the summary's ``simple_value``."""
            self._get_file_writer().add_summary(_scalar_summary(tag, scalar_value, new_style, double_precision),
                                                global_step, walltime)

        def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                        walltime: float | None = None) -> None:
            """As PyTorch: each ``tag_scalar_dict`` entry goes to its own run, ``<log_dir>/<main_tag>_<tag>``
            (``/`` in ``main_tag`` written as ``_``), under the tag ``main_tag``, so TensorBoard draws them in
            one chart."""
            from tensorboardX.summary import scalar
            from tensorboardX.writer import FileWriter

            walltime = time.time() if walltime is None else walltime
            for tag, value in tag_scalar_dict.items():
                run_dir = self.logdir + "/" + main_tag.replace("/", "_") + "_" + tag
                writer = self.all_writers.get(run_dir)
                if writer is None:
                    writer = self.all_writers[run_dir] = FileWriter(  # (a new file: its own number)
                        run_dir, max_queue=self._max_queue, flush_secs=self._flush_secs,
                        filename_suffix=self._filename_suffix)
                    _write_through(writer)
                writer.add_summary(_tag_kept(scalar(main_tag, _to_numpy(value)), main_tag), global_step, walltime)

        # The summaries whose tag tensorboardX cleans, written under the tag as given (as PyTorch's writer)
        def add_histogram(self, tag: str, values: Any, global_step: int | None = None, bins: Any = "tensorflow",
                          walltime: float | None = None, max_bins: int | None = None) -> None:
            """As PyTorch: a histogram of ``values`` (``bins``: ``"tensorflow"``, TensorBoard's default buckets, or
            NumPy's ``bins``)."""
            from tensorboardX.summary import histogram

            if isinstance(bins, str) and bins == "tensorflow":
                bins = self.default_bins
            summary = histogram(tag, _to_numpy(values), bins, max_bins=max_bins)
            self._get_file_writer().add_summary(_tag_kept(summary, tag), global_step, walltime)

        def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None, walltime: float | None = None,
                      dataformats: str = "CHW") -> None:
            """As PyTorch: one image (``dataformats``: its layout, ``CHW``, ``HWC`` or ``HW``)."""
            from tensorboardX.summary import image

            summary = image(tag, _to_numpy(img_tensor), dataformats=dataformats)
            self._get_file_writer().add_summary(_tag_kept(summary, tag), global_step, walltime)

        def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None,
                       walltime: float | None = None, dataformats: str = "NCHW") -> None:
            """As PyTorch: a batch of images, shown as one grid."""
            self.add_image(tag, img_tensor, global_step, walltime, dataformats)

        def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any, global_step: int | None = None,
                                 walltime: float | None = None, rescale: int = 1, dataformats: str = "CHW",
                                 labels: list[str] | None = None) -> None:
            """As PyTorch: an image with boxes drawn on it (``box_tensor``: one ``(xmin, ymin, xmax, ymax)`` row a
            box; ``labels``: one a box, else none drawn)."""
            from tensorboardX.summary import image_boxes

            box_tensor = _to_numpy(box_tensor)
            if isinstance(labels, str):
                labels = [labels]
            if labels is not None and len(labels) != box_tensor.shape[0]:
                labels = None
            summary = image_boxes(tag, _to_numpy(img_tensor), box_tensor, rescale=rescale, dataformats=dataformats,
                                  labels=labels)
            self._get_file_writer().add_summary(_tag_kept(summary, tag), global_step, walltime)

        def add_video(self, tag: str, vid_tensor: Any, global_step: int | None = None, fps: float = 4,
                      walltime: float | None = None) -> None:
            """As PyTorch: a video (``vid_tensor``: ``(N, T, C, H, W)``), written as an animated GIF."""
            from tensorboardX.summary import video

            summary = video(tag, _to_numpy(vid_tensor), fps)
            self._get_file_writer().add_summary(_tag_kept(summary, tag), global_step, walltime)

        def add_audio(self, tag: str, snd_tensor: Any, global_step: int | None = None, sample_rate: int = 44100,
                      walltime: float | None = None) -> None:
            """As PyTorch: one mono clip (``snd_tensor``: one dimension once its dimensions of size 1 are dropped,
            values in [-1, 1]), written as 16-bit WAV by Python's ``wave`` module as PyTorch's writer does
            (tensorboardX's needs the soundfile package)."""
            self._get_file_writer().add_summary(_audio_summary(tag, snd_tensor, sample_rate), global_step, walltime)

        def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True):
            """As PyTorch: the graph of ``model`` run on ``input_to_model`` (a tensor or a tuple of them), for
            TensorBoard's Graphs tab. ember reads it from the autograd graph of one forward pass in eval mode
            (``_graph.py`` says how, and where its nodes differ from PyTorch's JIT trace)."""
            from tensorboardX.proto import event_pb2

            from ._graph import build_graph

            graph_def = build_graph(model, input_to_model, verbose, use_strict_trace)
            self._get_file_writer().add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), None, None)

    own = ("add_hparams", "add_scalar", "add_scalars", "add_graph", "add_histogram", "add_image", "add_images",
           "add_image_with_boxes", "add_video", "add_audio")
    for name in dir(base):
        if name.startswith("add_") and name not in own and callable(getattr(base, name)):
            setattr(SummaryWriter, name, _numpy_arguments(getattr(base, name)))
    SummaryWriter.__module__ = __name__
    return SummaryWriter


def _scalar_summary(tag: str, value: Any, new_style: bool, double_precision: bool):
    """PyTorch's scalar summary: the tag unchanged; the value a ``simple_value``, or with ``new_style`` a tensor of
    one float (double with ``double_precision``) for TensorBoard's scalars plugin."""
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto

    array = xp.asarray(_to_numpy(value)).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} and "
                             f"{array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=metadata)])


def _audio_summary(tag: str, sound: Any, sample_rate: int):
    """PyTorch's audio summary: the samples squeezed to one dimension (else PyTorch's AssertionError), clipped to
    [-1, 1] with PyTorch's printed warning when any lies outside, scaled to 16-bit integers (by 32767, truncated)
    and encoded as a mono WAV file."""
    import wave

    from tensorboardX.proto.summary_pb2 import Summary

    array = xp.asarray(_to_numpy(sound)).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (array * xp.iinfo(xp.int16).max).astype("<i2")
    encoded = io.BytesIO()
    with wave.open(encoded, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(samples.data)
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=samples.shape[-1],
                         encoded_audio_string=encoded.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def _hparam_values(hparam_dict: dict) -> dict:
    """The hyperparameters as PyTorch's writer records them: numbers (a bool as 0/1, a tensor as its first
    element) and strings; None is left out; any other value is PyTorch's ValueError."""
    values = {}
    for name, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, (int, float)):
            values[name] = float(value)
        elif isinstance(value, str):
            values[name] = value
        elif isinstance(value, xp.ndarray):  # (a tensor, made an array by _to_numpy)
            values[name] = float(value[0])
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
    return values


def _set_discrete_domains(experiment, hparam_dict: dict, domains: dict) -> None:
    """Record ``domains`` (name -> list of values) in the experiment summary, as PyTorch's writer does, after
    checking them as PyTorch does."""
    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData

    for name, values in domains.items():
        if name not in hparam_dict:
            continue
        if not isinstance(values, list) or not all(isinstance(v, type(hparam_dict[name])) for v in values):
            raise TypeError(f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                            f"hparam_dict[{name}].")
    value = experiment.value[0]
    data = HParamsPluginData.FromString(value.metadata.plugin_data.content)
    for info in data.experiment.hparam_infos:
        for v in domains.get(info.name, ()):
            entry = info.domain_discrete.values.add()
            if isinstance(v, (int, float)):  # (a bool too: PyTorch's writer records True as the number 1)
                entry.number_value = float(v)
            else:
                entry.string_value = str(v)
    value.metadata.plugin_data.content = data.SerializeToString()


_module_getattr = module_getattr(__name__)
_writer_class = None


def __getattr__(name: str):
    # The writer's package loads when SummaryWriter is first used, not when ember.utils is imported.
    global _writer_class
    if name == "SummaryWriter":
        if _writer_class is None:
            _writer_class = _make_writer_class(_writer_base())
        return _writer_class
    return _module_getattr(name)
