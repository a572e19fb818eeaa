"""Writes a text corpus, repeated to a size, in each format mlm-train reads, with the usual
producers (for scripts/bench_corpus_formats.sh): .txt, .txt.zst, .jsonl, .jsonl.zst, .jsonl.gz,
Parquet (pyarrow, row groups of 10,000 documents, snappy), datasets' save_to_disk, CSV. A file
already written at that size is kept.

usage: write_corpus_formats.py SOURCE_TXT OUT_DIR SIZE_MB
"""

import csv
import gzip
import json
import pathlib
import sys

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard


def documents(text):
    """Blank-line separated blocks, as mlm-train's text reader cuts them."""
    return [b.strip("\n") for b in text.split("\n\n") if b.strip()]


def main():
    source, out, size_mb = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / "written.json"
    if stamp.exists() and json.loads(stamp.read_text()) == {"source": str(source), "size_mb": size_mb}:
        return
    base = documents(source.read_text(encoding="utf-8"))
    docs, size = [], 0
    while size < size_mb * 1_000_000:
        for d in base:
            docs.append(d)
            size += len(d.encode("utf-8")) + 2
    text = "\n\n".join(docs) + "\n"
    (out / "train.txt").write_text(text, encoding="utf-8")
    (out / "train.txt.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(text.encode("utf-8")))
    jsonl = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
    (out / "train.jsonl").write_bytes(jsonl)
    (out / "train.jsonl.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(jsonl))
    with gzip.open(out / "train.jsonl.gz", "wb", compresslevel=6) as f:
        f.write(jsonl)
    table = pa.table({"text": pa.array(docs, pa.string())})
    pq.write_table(table, out / "train.parquet", row_group_size=10_000)
    datasets.disable_progress_bars()
    datasets.Dataset(table).save_to_disk(str(out / "train_saved"))
    with open(out / "train.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text"])
        w.writerows([d] for d in docs)
    stamp.write_text(json.dumps({"source": str(source), "size_mb": size_mb}))


if __name__ == "__main__":
    main()
