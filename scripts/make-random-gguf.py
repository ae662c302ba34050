#!/usr/bin/env python3
"""Writes a Mistral-7B-shaped GGUF with random Q4_0 weights, for measuring
llama.cpp beside sparseflash (scripts/bench-llamacpp.sh): the speed of a
decode does not depend on the weights' values, only on their shapes and
format. Needs llama.cpp's gguf-py (give its folder with --gguf-py) and numpy.

  scripts/make-random-gguf.py --gguf-py LLAMA_CPP/gguf-py --out mistral-7b-q4_0.gguf
"""
import argparse
import sys

SHAPE = dict(vocab=32000, embd=4096, layers=32, heads=32, heads_kv=8, ff=14336, ctx=32768)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf-py", required=True, help="llama.cpp's gguf-py folder")
    ap.add_argument("--out", required=True, help="GGUF file to write")
    ap.add_argument("--layers", type=int, default=SHAPE["layers"], help="transformer blocks (32)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, a.gguf_py)
    import numpy as np
    try:
        import sentencepiece  # noqa: F401 (gguf-py imports it for vocabularies)
    except ImportError:
        # A file of random weights has no vocabulary to read: an empty stand-in
        # lets gguf-py load where python3-sentencepiece is not installed.
        import types
        sys.modules["sentencepiece"] = types.SimpleNamespace(SentencePieceProcessor=None)
    import gguf

    rng = np.random.default_rng(a.seed)
    scale = np.frombuffer(np.float16(0.002).tobytes(), dtype=np.uint8)

    def q4_0(rows, cols):
        blocks = cols // 32
        data = rng.integers(0, 256, size=(rows, blocks * 18), dtype=np.uint8)
        data[:, 0::18] = scale[0]
        data[:, 1::18] = scale[1]
        return data

    s = SHAPE
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("mistral-7b-shaped random Q4_0")
    w.add_context_length(s["ctx"])
    w.add_embedding_length(s["embd"])
    w.add_block_count(a.layers)
    w.add_feed_forward_length(s["ff"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["heads_kv"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(1e6)
    w.add_rope_dimension_count(s["embd"] // s["heads"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    w.add_tokenizer_model("llama")
    w.add_token_list([b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, s["vocab"])])
    w.add_token_scores([0.0] * s["vocab"])
    w.add_token_types([2, 3, 3] + [1] * (s["vocab"] - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    q4 = gguf.GGMLQuantizationType.Q4_0
    kv = s["embd"] // s["heads"] * s["heads_kv"]
    w.add_tensor("token_embd.weight", q4_0(s["vocab"], s["embd"]), raw_dtype=q4)
    for i in range(a.layers):
        print(f"block {i + 1}/{a.layers}", file=sys.stderr, flush=True)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(s["embd"], dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(s["embd"], dtype=np.float32))
        for name, rows, cols in [("attn_q", s["embd"], s["embd"]), ("attn_k", kv, s["embd"]),
                                 ("attn_v", kv, s["embd"]), ("attn_output", s["embd"], s["embd"]),
                                 ("ffn_gate", s["ff"], s["embd"]), ("ffn_up", s["ff"], s["embd"]),
                                 ("ffn_down", s["embd"], s["ff"])]:
            w.add_tensor(f"blk.{i}.{name}.weight", q4_0(rows, cols), raw_dtype=q4)
    w.add_tensor("output_norm.weight", np.ones(s["embd"], dtype=np.float32))
    w.add_tensor("output.weight", q4_0(s["vocab"], s["embd"]), raw_dtype=q4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file(progress=False)
    w.close()


if __name__ == "__main__":
    main()
