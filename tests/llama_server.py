"""`python -m llama_cpp.server`, with llama.cpp's weight repacking off as palinode-vault loads its
own models (palinode_vault/models/backend.py says why): on a CPU whose AMX path faults, the
server's first decode of the quantised SmolLM2 kills it with SIGILL, and the tests that talk to a
real OpenAI-compatible server would see a server that is gone. The server itself is unchanged;
its arguments are passed through.

    python tests/llama_server.py --model M.gguf --host 127.0.0.1 --port 8000 ...
"""

from __future__ import annotations

import sys

import llama_cpp.llama_cpp as low

_defaults = low.llama_model_default_params


def _without_repacking():  # type: ignore[no-untyped-def]  # a ctypes struct
    params = _defaults()
    if hasattr(params, "use_extra_bufts"):
        params.use_extra_bufts = False
    return params


low.llama_model_default_params = _without_repacking

if __name__ == "__main__":
    from llama_cpp.server.__main__ import main

    sys.argv[0] = "llama_cpp.server"
    sys.exit(main())
