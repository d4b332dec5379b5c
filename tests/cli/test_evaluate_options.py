"""``evaluate``'s options are declared once (:class:`reports.evaluate.options.EvaluateOptions`):
the parser, ``to_argv``, the keywords of ``compare()``/``plan()`` and the checks come from
the declarations, and every rule between options is a one-line message built by ``fail``."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import pytest

from evalcal_core.cli import ArgumentParser
from evalcal_core.designs import KINDS, METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from evalcal_core.keywords import option_flags
from evalcal_core.options import add_options, check_options, declared, option, to_argv
from evalcal_core.options import config_from_args as options_from_args
from evalcal_core.params import parse_key_values
from evalcal_core.validate import InvalidParameterError
from protocols import PROTOCOLS, names
from reports.evaluate.api import _NOT_KEYWORDS
from reports.evaluate.options import (
    EvalConfig,
    EvaluateOptions,
    build_parser,
    config_from_args,
    resolve,
)


def _flags(parser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--")}


def test_every_option_of_the_parser_is_declared():
    """The parser holds the declared options, ``--help`` and the positional results CSV,
    nothing else."""
    parser = build_parser()
    assert _flags(parser) == {opt.flag for _, opt in declared(EvaluateOptions)} | {"--help"}
    positional = [a.dest for a in parser._actions if not a.option_strings]
    assert positional == ["results"]


def test_parser_defaults_are_the_declared_defaults():
    parsed = options_from_args(EvaluateOptions, build_parser().parse_args([]))
    assert parsed == EvaluateOptions()
    assert resolve(parsed) == EvalConfig()


#: every option away from its default (the margin and threshold exact in ``%g``), but --json:
#: it and --format each choose the output's format, given one at a time
CHANGED = EvaluateOptions(
    arm=("a=x.jsonl", "b=y.jsonl", "c=z"), metric="acc", task="mmlu", filter="strict",
    design=MODELS_CLUSTERED, cluster="subject", reference="a", correction="bh",
    claim="non-inferiority", margin=0.5, gate=True, stream=False, alpha=0.1,
    protocols=("bca", "single_run"), protocol_param=("n_resamples=500",), threshold=1.5,
    percent=True, partial_credit=True, seed=7, format="markdown",
    log_format="lm-eval", max_member_mb=64.0, forest="f.png")


@pytest.mark.parametrize("opts", [
    CHANGED,
    EvaluateOptions(baseline="b.jsonl", variant="v.jsonl", design=METHODS_INDEPENDENT,
                    stream=True, stream_method="empirical-bernstein", claim="superiority",
                    margin=0.0, metric_range=(0.0, 10.0), json=True),
    EvaluateOptions(leaderboard=True, correction="holm", format="latex"),
], ids=["logs-and-claim", "baseline-stream", "leaderboard"])
def test_to_argv_round_trips_through_the_parser(opts):
    argv = to_argv(opts)
    assert argv.count("--arm") == len(opts.arm)  # --arm is repeated, once per arm
    assert options_from_args(EvaluateOptions, build_parser().parse_args(argv)) == opts
    assert config_from_args(build_parser().parse_args(argv)) == resolve(opts)


def test_resolve_scales_and_names():
    """What the run reads: arms by name, parameters as a dict, margin and threshold in the
    scores' scale (--percent: fractions), the zipped members' bound in bytes."""
    config = resolve(CHANGED)
    assert config.arms == {"a": "x.jsonl", "b": "y.jsonl", "c": "z"}
    assert config.params == {"n_resamples": 500, "threshold": 0.015}
    assert config.margin == pytest.approx(0.005)
    assert config.max_member_bytes == 64 * 2**20
    assert config.stream_method == "betting"  # the default sequence, without --stream


def test_the_keywords_are_the_declared_fields():
    """``compare()``'s keywords are EvaluateOptions' fields but the command's output options
    and --arm (given as ``arms``); ``plan()``'s are PlanOptions' fields, as its parser reads
    them."""
    from sim import plan

    declared_flags = option_flags(EvaluateOptions)
    assert set(_NOT_KEYWORDS) == {"arm", "gate", "json", "format", "forest", "html"}
    assert set(_NOT_KEYWORDS) < set(declared_flags)
    flags = option_flags(plan.PlanOptions)
    parser = plan.build_parser()
    assert flags == {a.dest: a.option_strings[-1] for a in parser._actions
                     if a.option_strings and a.dest != "help"}
    assert flags["generator_param"] == "--param"


@dataclass(frozen=True)
class _Repeated:
    name: tuple = option("--name", ("a",), action="append", help="repeat per name")

    def __post_init__(self):
        check_options(self)


def test_an_append_option_is_repeated_and_starts_from_its_default_each_parse():
    """``action="append"``: one flag per value, a tuple in the config; argparse appends to a
    copy of the default, so one parse does not leak into the next."""
    parser = add_options(ArgumentParser(prog="toy"), _Repeated)
    parsed = options_from_args(_Repeated, parser.parse_args(["--name", "b", "--name", "c"]))
    assert parsed == _Repeated(name=("a", "b", "c"))
    assert options_from_args(_Repeated, parser.parse_args([])) == _Repeated()
    assert to_argv(_Repeated(name=("x", "y"))) == ["--name", "x", "--name", "y"]


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "1.5"], r"^The '--alpha' option must be a finite number > 0 and < 1\. "
                         r"Got 1\.5 instead\.$"),
    (["--format", "pdf"], r"^The '--format' option must be one of text, markdown, latex\. "
                          r"Got 'pdf' instead\.$"),
    (["--log-format", "x"], r"^The '--log-format' option must be one of csv, .*lm-eval"),
    (["--metric-range", "0", "1", "--percent"],
     r"^The '--percent' and '--metric-range' options must be given one at a time: declare "
     r"the range in the file's own units\. Got both instead\.$"),
    (["--baseline", "b"], r"^The '--baseline' and '--variant' options must be given "
                          r"together: .* Got only --baseline instead\.$"),
    (["--arm", "a=x", "--baseline", "b", "--variant", "v"],
     r"^The '--arm' and '--baseline' options must be given one at a time: .*not both\. Got "
     r"both instead\.$"),
    (["r.csv", "--arm", "a=x", "--arm", "b=y"],
     r"^The 'results' parameter must be left out when the arms are harness logs .*not both\. "
     r"Got 'r\.csv' instead\.$"),
    (["--arm", "a=x"], r"^The '--arm' option must be given once per arm, for two or more "
                       r"arms\. Got one arm \(a\) instead\.$"),
    (["r.csv", "--task", "t"], r"^The '--task' option must be used with harness logs .*"
                               r"Got 't' instead\.$"),
    (["r.csv", "--log-format", "csv"], r"^The '--log-format' option must be used with harness "
                                       r"logs .*Got 'csv' instead\.$"),
    (["--cluster", "topic", "--design", MODELS],
     r"^The '--cluster' and '--design' options must be given together only with --design "
     rf"{MODELS_CLUSTERED} .*Got --cluster topic with --design {MODELS} instead\.$"),
    (["--design", MODELS_CLUSTERED], rf"^The '--cluster' option must be given with --design "
                                     rf"{MODELS_CLUSTERED}: .*Got no --cluster instead\.$"),
    (["--equal-variances", "--correction", "maxt"],
     rf"^The '--equal-variances' option must be given with --design {METHODS_INDEPENDENT} and "
     r"--correction maxt .*Got --correction maxt with --design \(inferred\) instead\.$"),
    (["--stream-method", "betting"], r"^The '--stream-method' option must be given with "
                                     r"--stream .*Got 'betting' instead\.$"),
    (["--stream", "--claim", "superiority", "--alpha", "0.6"],
     r"^The '--alpha' option must be < 0\.5 with --stream and --claim .*Got 0\.6 instead\.$"),
    (["--stream", "--leaderboard"], r"^The '--stream' and '--leaderboard' options must be "
                                    r"given one at a time: .*Got both instead\.$"),
    (["--leaderboard", "--correction", "bh"], r"^The '--leaderboard' option must be given "
                                              r"without --claim, .*Got --correction bh"),
    (["--gate"], r"^The '--gate' option must be given with a --claim .*Got no --claim"),
    (["--margin", "0.01"], r"^The '--margin' option must be given with a --claim\. Got 0\.01 "
                           r"instead\.$"),
    (["--claim", "equivalence"], r"^The '--margin' option must be a number > 0 in the file's "
                                 r"units for --claim equivalence\. Got no --margin instead\.$"),
    (["--claim", "non-inferiority", "--margin", "0"],
     r"^The '--margin' option must be > 0 for --claim non-inferiority\. Got 0\.0 instead\.$"),
    (["--metric-range", "0", "2", "--claim", "superiority", "--margin", "3"],
     r"^The '--margin' option must be below the width of the metric's range \[0, 2\]\. Got "
     r"3\.0 instead\.$"),
    (["--threshold", "0.1", "--protocol-param", "threshold=0.2"],
     r"^The '--threshold' and '--protocol-param' options must be given one at a time "),
    (["--protocols", "paired_t", "--protocol-param", "B=10"],
     r"^The '--protocol-param' option must be KEY=VALUE with KEY a parameter of a selected "
     r"protocol \(paired_t\)\. Got 'B' instead\.$"),
])
def test_each_rule_is_one_line_built_by_fail(argv, message):
    with pytest.raises(InvalidParameterError, match=message):
        config_from_args(build_parser().parse_args(argv))


def _takers_by_rule(key, value, selected):
    """The selected protocols taking ``key`` that refuse ``value``, grouped by the rule
    each states (read from each protocol's own refusal, one at a time)."""
    by_rule, n_takers = {}, 0
    value = parse_key_values([f"{key}={value}"], "--protocol-param")[key]  # as the parser reads it
    for name in selected:
        if not PROTOCOLS.accepts(name, key):
            continue
        n_takers += 1
        try:
            PROTOCOLS.get(name, **{key: value})
        except InvalidParameterError as exc:
            rule = re.search(r"must be (.+)\. Got ", str(exc)).group(1)
            by_rule.setdefault(rule, []).append(name)
    return by_rule, n_takers


@pytest.mark.parametrize(("value", "selected"), [
    ("abc", None), ("1", None), ("1", ["question_bootstrap", "signflip_questions", "bca"]),
])
def test_a_refused_protocol_param_is_named_by_the_key_typed_for_every_refuser(value, selected):
    """``B`` is n_resamples in some protocols and n_permutations in others: the refusal names
    the key as typed, each rule with the protocols stating it, and how many of those taking
    the key refused; no protocol's own field name, and not only the first protocol."""
    chosen = names() if selected is None else selected
    by_rule, n_takers = _takers_by_rule("B", value, chosen)
    argv = ["--protocol-param", f"B={value}"] + ([] if selected is None
                                                  else ["--protocols", *selected])
    with pytest.raises(InvalidParameterError) as info:
        config_from_args(build_parser().parse_args(argv))
    message = str(info.value)
    assert message.startswith(f"--protocol-param B={value}: B must be "), message
    for rule, refusers in by_rule.items():
        assert f"{rule} for {', '.join(refusers)}" in message, (rule, message)
    refused = sum(map(len, by_rule.values()))
    assert (f"({refused} of the {n_takers} taking it)" in message) == (refused < n_takers)
    assert "n_resamples" not in message and "n_permutations" not in message
    assert message.endswith(f"Got {value if value.isdigit() else repr(value)} instead.")


def test_options_refuse_a_bad_value_when_built_in_python():
    """The declarations check a config built without the parser, too."""
    with pytest.raises(InvalidParameterError, match=r"^The '--seed' option must be an integer"):
        EvaluateOptions(seed=-1)
    assert dataclasses.replace(CHANGED, seed=3).seed == 3


#: one value per keyword, and the command line that says the same
_SAME = [
    *(({"design": kind}, ["--design", kind]) for kind in KINDS),
    ({"design": METHODS_INDEPENDENT, "equal_variances": True, "correction": "maxt"},
     ["--design", METHODS_INDEPENDENT, "--equal-variances", "--correction", "maxt"]),
    ({"cluster": "topic"}, ["--cluster", "topic"]),
    ({"reference": "base"}, ["--reference", "base"]),
    ({"correction": "maxt"}, ["--correction", "maxt"]),
    ({"claim": "superiority"}, ["--claim", "superiority"]),
    ({"margin": 0.01}, ["--margin", "0.01"]),
    ({"alpha": 0.1}, ["--alpha", "0.1"]),
    ({"seed": 7}, ["--seed", "7"]),
    ({"protocols": ["paired_t", "wilcoxon"]}, ["--protocols", "paired_t", "wilcoxon"]),
    ({"protocols": "paired_t"}, ["--protocols", "paired_t"]),
    ({"protocol_param": {"b": 99}}, ["--protocol-param", "b=99"]),
    ({"threshold": 0.02}, ["--threshold", "0.02"]),
    ({"percent": True}, ["--percent"]),
    ({"metric_range": (0, 10)}, ["--metric-range", "0", "10"]),
    ({"partial_credit": True}, ["--partial-credit"]),
    ({"stream": True, "stream_method": "empirical-bernstein"},
     ["--stream", "--stream-method", "empirical-bernstein"]),
    ({"stream": True, "order_by": "time"}, ["--stream", "--order-by", "time"]),
    ({"leaderboard": True}, ["--leaderboard"]),
    ({"metric": "acc", "task": "t", "filter": "f", "log_format": "lm-eval",
      "max_member_mb": 10}, ["--metric", "acc", "--task", "t", "--filter", "f",
                             "--log-format", "lm-eval", "--max-member-mb", "10"]),
    ({"baseline": "a", "variant": "b"}, ["--baseline", "a", "--variant", "b"]),
    ({"score_column": "acc", "arm_column": "m", "question_column": "q", "seed_column": "s"},
     ["--score-column", "acc", "--arm-column", "m", "--question-column", "q",
      "--seed-column", "s"]),
    ({"model_column": "m"}, ["--model-column", "m"]),
    ({"lower_is_better": True}, ["--lower-is-better"]),
    ({"common_questions": True}, ["--common-questions"]),
]


@pytest.mark.parametrize(("keywords", "argv"), _SAME)
def test_keywords_fill_the_options_the_command_line_fills(keywords, argv):
    """``compare()``'s keywords give the same EvaluateOptions as the command's flags (the
    declarations type both: no command line is built from keywords)."""
    from evalcal_core.keywords import options_from_keywords

    typed = options_from_keywords(EvaluateOptions, keywords, "compare",
                                  leave_out=_NOT_KEYWORDS)
    assert typed == options_from_args(EvaluateOptions, build_parser().parse_args(argv))


def test_every_keyword_is_checked_against_its_flag():
    """Each of ``compare()``'s keywords has a case above (``design=`` one per kind), so a
    keyword that stops filling what its flag fills is caught."""
    covered = set().union(*(keywords for keywords, _ in _SAME))
    assert covered == set(option_flags(EvaluateOptions)) - set(_NOT_KEYWORDS)
    assert {keywords["design"] for keywords, _ in _SAME if "design" in keywords} == set(KINDS)
