#!/usr/bin/env python3
"""mergekit (the version pinned in scripts/requirements.txt) run on mlm-merge's inputs: the
reference mlm-merge's tensors are compared with (tests/cli/merge_reference_test.cpp).

    .venv/bin/python tests/reference/mergekit_client.py WORK_DIR CONFIG.yaml OUT_DIR [CONFIG.yaml OUT_DIR]...

Each CONFIG is a mergekit YAML file; each merge is run as mergekit-yaml runs it (run_merge with
the default MergeOptions), all in one process. mergekit's own BertForMaskedLM definition
requires a pooler that a masked-LM export does not hold, so each input is shown to mergekit
through WORK_DIR/<n>: links to its files and a config.json whose architectures name none that
mergekit knows, which makes it infer the architecture from the weights (every tensor merged).
Prints {"outputs": [OUT_DIR, ...]}.
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local directories only: no hub look-ups

import yaml  # noqa: E402
from mergekit.config import MergeConfiguration  # noqa: E402
from mergekit.merge import run_merge  # noqa: E402
from mergekit.options import MergeOptions  # noqa: E402


def shadow(model_dir, work_dir, seen):
    if model_dir in seen:
        return seen[model_dir]
    out = os.path.join(work_dir, str(len(seen)))  # absolute: a relative path reads as a hub name
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(model_dir):
        if name != "config.json":
            os.symlink(os.path.abspath(os.path.join(model_dir, name)), os.path.join(out, name))
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config["architectures"] = ["MlmMergeReference"]
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    seen[model_dir] = out
    return out


def main():
    work_dir, pairs = os.path.abspath(sys.argv[1]), sys.argv[2:]
    seen = {}
    outputs = []
    for config_file, out_dir in zip(pairs[0::2], pairs[1::2]):
        with open(config_file, encoding="utf-8") as f:
            config = yaml.safe_load(f)
        for entry in config["models"]:
            entry["model"] = shadow(entry["model"], work_dir, seen)
        if config.get("base_model"):
            config["base_model"] = shadow(config["base_model"], work_dir, seen)
        run_merge(MergeConfiguration.model_validate(config), os.path.abspath(out_dir), options=MergeOptions())
        outputs.append(out_dir)
    print(json.dumps({"outputs": outputs}))


if __name__ == "__main__":
    main()
