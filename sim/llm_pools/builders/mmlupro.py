"""``mmlu-pro``: MMLU-Pro's 5-shot chain-of-thought outputs, one zip per model.

Source: github.com/TIGER-AI-Lab/MMLU-Pro (Apache-2.0) at commit
``f418b116db00b065c2aea046518d8fcf74d39872``, files
``eval_results/model_outputs_MODEL_5shots.zip``: each holds one JSON file, a list of one record
per question, ``{question_id, category, answer, pred, ...}``, ``pred`` the letter parsed
from the model's output or null when none could be parsed. The pool's model is ``MODEL``
(from the zip's name), the item the ``question_id``, one attempt scored 1 when ``pred``
equals ``answer`` (a missing prediction is scored wrong); the cluster is the question's
``category`` (14: math, physics, law, ...). The items are the questions every input has
(two Gemini files lack a few), by id; models by name.

The shared pool holds 28 models: the files of the project's snapshot of the repository (48
zips at that commit; 19 of them, the largest, were not in the snapshot) except
DeepSeek-Coder-V2, whose file holds 10,394 records, 43 of them not objects; building with
more files gives another pool (and another sha256). The commands below fetch exactly the
28. Pool ``mmlupro_cot5.csv.gz``: 28 models x 12,002 questions x 1 attempt, 14 categories;
sha256 of its CSV ``b2081ab0f1a50696a6ec6b938e910dc680c6a6a125c7f301e7b8f36eff60fb8a`` (CRLF
line ends)::

    git clone https://github.com/TIGER-AI-Lab/MMLU-Pro mp
    C=f418b116db00b065c2aea046518d8fcf74d39872
    M='Llama-2-13b-hf Llama-2-70b-hf Llama-2-7b-hf Meta-Llama-3-70B Meta-Llama-3-8B
    Meta-Llama-3_1-70B Meta-Llama-3_1-70B-Instruct Meta-Llama-3_1-8B Meta-Llama-3_1-8B-Instruct
    Mistral-7B-Instruct-v0.1 Mistral-7B-Instruct-v0.2 Mistral-7B-v0.1 Mistral-7B-v0.2-hf
    Mixtral-8x7B-Instruct-v0.1 Mixtral-8x7B-v0.1 Phi-3-mini-4k-instruct Qwen1.5-110B
    Qwen1.5-72B-Chat Qwen1.5-7B-Chat Yi-34B Yi-6B Yi-6b-Chat c4ai-command-r-v01
    gemini-1.5-flash-002 gemini-1.5-pro-002 gemma-7b jamba-1.5-large mathstral-7B'
    for m in $M; do f=model_outputs_${m}_5shots.zip
    git -C mp show "$C:eval_results/$f" > $f; done
    python -m sim.llm_pools.build mmlu-pro --input model_outputs_*_5shots.zip --out mmlupro_cot5.csv
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pandas as pd

from ._base import PoolBuilder, doc_commands, records, refuse, register

EXPECTED = ("MMLU-Pro's model_outputs_MODEL_5shots.zip: one JSON file, a list of {question_id, "
            "category, answer, pred} records")
#: the zip's name: ``model_outputs_MODEL_5shots.zip`` (some are ``..._5shots.json.zip``)
NAME = re.compile(r"^model_outputs_(.+)_5shots(?:\.json)?\.zip$")
#: the most bytes one zip's JSON may inflate to (a model's outputs are ~15 MB)
MAX_JSON_BYTES = 2**30
#: the commands of the docstring (stated once there: the model list is long)
COMMANDS = doc_commands(__doc__)


def model_of(path: Path) -> str:
    """``MODEL`` of ``model_outputs_MODEL_5shots.zip``."""
    match = NAME.match(Path(path).name)
    if not match:
        raise refuse(path, "is not named model_outputs_MODEL_5shots.zip, which names the model "
                           "(keep the repository's file name)")
    return match[1]


def outputs(path: Path) -> pd.DataFrame:
    """One zip's records: ``item, cluster, score`` in file order."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [i for i in archive.infolist() if i.filename.endswith(".json")]
            if len(members) != 1:
                raise refuse(path, f"holds {len(members)} JSON files; expected {EXPECTED}")
            if members[0].file_size > MAX_JSON_BYTES:
                raise refuse(path, f"inflates past {MAX_JSON_BYTES:,} bytes (the cap on one "
                                   "model's outputs)")
            text = archive.read(members[0]).decode("utf-8")
    except zipfile.BadZipFile:
        raise refuse(path, f"is not a zip archive; expected {EXPECTED}") from None
    except UnicodeDecodeError:
        raise refuse(path, "holds a JSON file that is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(path, f"holds a file that is not JSON ({exc.msg}, line {exc.lineno}); "
                           f"expected {EXPECTED}") from None
    except RecursionError:
        raise refuse(path, f"holds JSON nested too deeply to read (past Python's recursion "
                           f"limit); expected {EXPECTED}") from None
    table = records(data, path, {"question_id": int, "category": str, "answer": str,
                                 "pred": (str, type(None))}, EXPECTED)
    return pd.DataFrame({"item": table["question_id"], "cluster": table["category"],
                         # a missing prediction (null) is wrong
                         "score": table["pred"].eq(table["answer"]).astype(int)})


def mmlupro_table(inputs) -> pd.DataFrame:
    """The long pool of MMLU-Pro output zips (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; models by name, items by id;
        ``attrs["left_out"]`` counts the questions some input lacks.
    """
    parts: dict[str, pd.DataFrame] = {}
    for path in map(Path, inputs):
        model = model_of(path)
        if model in parts:
            raise refuse(path, f"is a second file for model {model!r}")
        parts[model] = outputs(path)
    common = set.intersection(*(set(p["item"]) for p in parts.values()))
    if not common:
        raise refuse(next(iter(map(Path, inputs))), "and the other inputs share no question")
    frame = pd.concat([p[p["item"].isin(common)].sort_values("item", kind="stable")
                       .assign(model=m, attempt=0) for m, p in sorted(parts.items())],
                      ignore_index=True)
    everything = set().union(*(set(p["item"]) for p in parts.values()))
    frame.attrs["left_out"] = ((f"{len(everything) - len(common)} question(s) some input "
                                "lacks",) if len(everything) > len(common) else ())
    return frame[["model", "item", "attempt", "score", "cluster"]]


@register
class MMLUPro(PoolBuilder):
    """MMLU-Pro, 5-shot chain of thought: one answer per model and question."""

    name = "mmlu-pro"
    title = "MMLU-Pro, 5-shot chain-of-thought outputs of the leaderboard's models"
    repository = "TIGER-AI-Lab/MMLU-Pro"
    commit = "f418b116db00b065c2aea046518d8fcf74d39872"
    paths = ("eval_results/model_outputs_*_5shots.zip",)
    licence = "Apache-2.0"
    pool = "mmlupro_cot5.csv.gz"
    sha256 = "b2081ab0f1a50696a6ec6b938e910dc680c6a6a125c7f301e7b8f36eff60fb8a"
    newline = "\r\n"
    max_inputs = None
    commands = COMMANDS

    def frame(self, inputs):
        return mmlupro_table(inputs)
