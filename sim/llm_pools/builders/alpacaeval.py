"""``alpacaeval``: AlpacaEval 2.0's per-instruction preferences, one file per model.

Source: github.com/tatsu-lab/alpaca_eval (Apache-2.0) at commit
``cd543a149df89434d8a54582c0151c0b945c3d20``, files
``results/MODEL/weighted_alpaca_eval_gpt4_turbo/annotations.json``: a list of one record per
instruction, ``{instruction, dataset, generator_2, preference, ...}``, ``preference`` in
[1, 2] the judge's (GPT-4 Turbo, weighted by its log-probabilities) preference for the
model's output (``output_2``) over the reference's (``output_1``, gpt4_1106_preview). The
pool's model is the folder ``MODEL`` (``NullModel``'s records name their generator
``example``), the item the first 12 hex digits of the sha1 of the instruction's UTF-8 text,
one attempt scored ``preference - 1`` (a fraction in [0, 1]: 1 when the model's output is
preferred for sure); the cluster is the instruction's source set (``dataset``: helpful_base,
koala, oasst, selfinstruct, vicuna). A model lacking some instruction that another input has
is left out (a pool needs every item for every model). Files are read in path order
(``claude-2.1/`` before ``claude-2/`` before ``claude/``), records in file order.

The shared pool holds 52 models: the complete ones among the 58 files of the project's
snapshot of the repository (the repository has 223 such files at that commit; building from
all of them gives a larger pool with another sha256). The commands below fetch exactly the
52. Pool ``alpacaeval2.csv.gz``: 52 models x 805 instructions x 1 attempt, 5 source sets;
sha256 of its CSV ``6818190f47d5513c94159c85e91f395e0f2431ce00b6d66940c9ae0cf53b1d6d``
(CRLF line ends)::

    git clone https://github.com/tatsu-lab/alpaca_eval ae
    C=cd543a149df89434d8a54582c0151c0b945c3d20
    A=weighted_alpaca_eval_gpt4_turbo/annotations.json
    M='FuseChat-Gemma-2-9B-Instruct FuseChat-Llama-3.1-8B-Instruct
    FuseChat-Llama-3.2-1B-Instruct FuseChat-Llama-3.2-3B-Instruct FuseChat-Qwen-2.5-7B-Instruct
    Mixtral-8x7B-Instruct-v0.1_concise NullModel OpenHermes-2.5-Mistral-7B Qwen-14B-Chat
    alpaca-7b alpaca-farm-ppo-human alpaca-farm-ppo-sim-gpt4-20k baize-v2-13b chatglm2-6b
    claude-2.1 claude-2.1_concise claude-2 claude-instant-1.2 claude falcon-40b-instruct
    falcon-7b-instruct gemma-2b-it gemma-7b-it gpt-3.5-turbo-0301 gpt-3.5-turbo-1106
    gpt-3.5-turbo-1106_concise gpt-3.5-turbo-1106_verbose gpt4_0613_concise gpt4_1106_preview
    gpt4_gamed humpback-llama2-70b jina-chat minichat-3b nous-hermes-13b oasst-rlhf-llama-33b
    oasst-sft-llama-33b oasst-sft-pythia-12b openbuddy-falcon-40b-v9 openbuddy-llama-30b-v7.1
    openbuddy-llama2-13b-v11.1 openbuddy-llama2-70b-v10.1 phi-2-sft pythia-12b-mix-sft
    text_davinci_003 ultralm-13b vicuna-13b-v1.5-togetherai vicuna-13b-v1.5 vicuna-13b
    vicuna-7b-v1.3 vicuna-7b-v1.5 vicuna-7b wizardlm-13b'
    for m in $M; do mkdir -p results/$m/weighted_alpaca_eval_gpt4_turbo
    git -C ae show "$C:results/$m/$A" > results/$m/$A; done
    python -m sim.llm_pools.build alpacaeval --input results/*/$A --out alpacaeval2.csv
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from evalcal_core.validate import plain

from ._base import PoolBuilder, doc_commands, read_json, records, refuse, register

EXPECTED = ("AlpacaEval's annotations.json: a list of {instruction, dataset, preference} "
            "records, preference in [1, 2]")
#: the judge whose annotations the pool holds (the folder above each file)
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
#: hex digits of the instruction's sha1 that name an item
ITEM_DIGITS = 12
#: the commands of the docstring (stated once there: the model list is long)
COMMANDS = doc_commands(__doc__)


def item_id(instruction: str) -> str:
    """The item name of an instruction: the first 12 hex digits of its UTF-8 text's sha1."""
    return hashlib.sha1(instruction.encode("utf-8")).hexdigest()[:ITEM_DIGITS]


def model_of(path: Path) -> str:
    """The model of ``results/MODEL/ANNOTATOR/annotations.json``: the folder ``MODEL``."""
    parts = Path(path).parts
    if len(parts) < 3 or parts[-2] != ANNOTATOR:
        raise refuse(path, f"is not in a 'MODEL/{ANNOTATOR}/' folder; keep "
                           "the repository's layout (results/MODEL/ANNOTATOR/annotations.json),"
                           " which names the model")
    return parts[-3]


def annotations(path: Path) -> pd.DataFrame:
    """One file's records: ``item, score, cluster`` in file order."""
    table = records(read_json(path, EXPECTED), path,
                    {"instruction": str, "dataset": str, "preference": (int, float)}, EXPECTED)
    pref = table["preference"].astype(float)
    bad = ~pref.between(1.0, 2.0)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise refuse(path, f"record {row} has preference {plain(pref.iloc[row])}, not in "
                           "[1, 2]")
    return pd.DataFrame({"item": table["instruction"].map(item_id), "score": pref - 1.0,
                         "cluster": table["dataset"]})


def alpacaeval_table(inputs) -> pd.DataFrame:
    """The long pool of AlpacaEval ``annotations.json`` files (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; ``attrs["left_out"]`` names the
        models that lack some instruction.
    """
    # path order below results/: the order the shared pool lists its models in
    placed = sorted(("/".join(Path(p).parts[-3:]), model_of(p), Path(p)) for p in inputs)
    seen: dict[str, Path] = {}
    parts = {}
    for _key, model, path in placed:
        if model in seen:
            raise refuse(path, f"is a second file for model {model!r} (the first: "
                               f"{str(seen[model])!r})")
        seen[model] = path
        parts[model] = annotations(path)
    everything = set().union(*(set(p["item"]) for p in parts.values()))
    complete = {m: p for m, p in parts.items() if set(p["item"]) == everything}
    if not complete:
        raise refuse(seen[next(iter(parts))], f"and the other inputs share no complete set: no "
                     f"model has all {len(everything)} instructions")
    frame = pd.concat([p.assign(model=m, attempt=0) for m, p in complete.items()],
                      ignore_index=True)
    frame.attrs["left_out"] = tuple(f"{m} ({len(set(p['item']))} of {len(everything)} "
                                    "instructions)" for m, p in parts.items()
                                    if m not in complete)
    return frame[["model", "item", "attempt", "score", "cluster"]]


@register
class AlpacaEval(PoolBuilder):
    """AlpacaEval 2.0: continuous preferences against gpt4_1106_preview, one per model."""

    name = "alpacaeval"
    title = "AlpacaEval 2.0 (weighted GPT-4 Turbo judge), 805 instructions"
    repository = "tatsu-lab/alpaca_eval"
    commit = "cd543a149df89434d8a54582c0151c0b945c3d20"
    paths = ("results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json",)
    licence = "Apache-2.0"
    pool = "alpacaeval2.csv.gz"
    sha256 = "6818190f47d5513c94159c85e91f395e0f2431ce00b6d66940c9ae0cf53b1d6d"
    newline = "\r\n"
    max_inputs = None
    commands = COMMANDS

    def frame(self, inputs):
        return alpacaeval_table(inputs)
