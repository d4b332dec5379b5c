"""A generator setting in words, for titles and tables (``mu=0.9;sigma=0.005`` ->
"mean accuracy 90%, σ = 0.5 pp per seed")."""

from __future__ import annotations

import re

from evalcal_core.params import decode


def short_label(params: str) -> str:
    """``dataset scenario`` for a real pool's parameters, else the parameters themselves."""
    fields = decode(params)
    if "dataset" in fields and "scenario" in fields:
        return f"{fields['dataset']} {fields['scenario']}"
    return params


def effect_words(params: str, effect_pp: float) -> str:
    """An effect in the setting's units: ``1 pp``, or for a CSV pool with a declared
    metric range (``metric_low``/``metric_high``) ``+1.32 (score in [0, 1000])``: the
    frame's ``effect_pp`` is 100 times the delta in the scores' units."""
    fields = decode(params)
    if "metric_low" in fields and "metric_high" in fields:
        return (f"{effect_pp / 100:+.4g} (score in [{float(fields['metric_low']):g}, "
                f"{float(fields['metric_high']):g}])")
    return f"{effect_pp:.3g} pp"


_WORDS = {
    "mu": lambda v: f"mean accuracy {100 * v:g}%",
    "sigma": lambda v: f"σ = {100 * v:g} pp per seed",
    "rho": lambda v: f"ρ = {v:g} between a seed's arms",
    "noise": lambda v: f"{v} noise",
    "n_questions": lambda v: f"{v} questions",
    "p_easy": lambda v: f"{100 * v:g}% easy",
    "p_hard": lambda v: f"{100 * v:g}% hard",
    "sd_seed": lambda v: f"seed sd {v:g} (logit)",
    "sd_question": lambda v: f"question sd {v:g} (logit)",
    "sd_noise": lambda v: f"noise sd {v:g} (logit)",
    "theta": lambda v: f"intercept {v:g} (logit)",
}


def setting_words(params: str) -> str:
    """A generator's parameter string in words with units.

    >>> setting_words("mu=0.9;sigma=0.005;rho=0.5;noise=normal")
    "mean accuracy 90%, σ = 0.5 pp per seed, ρ = 0.5 between a seed's arms, normal noise"
    """
    fields = decode(params)
    if "dataset" in fields and "scenario" in fields:
        return short_label(params)
    words = []
    if "low" in fields and "high" in fields:
        low, high = fields.pop("low"), fields.pop("high")
        fields["_rest"] = f"other questions solved with p in [{low:g}, {high:g}]"
    for key, value in fields.items():
        if key == "_rest":
            words.append(value)
        elif key in _WORDS and (key == "noise" or not isinstance(value, str)):
            words.append(_WORDS[key](value))
        else:
            words.append(f"{key} = {value}")
    return ", ".join(words)


def title_words(title: str) -> str:
    """``generator: k=v;...`` in words; other titles unchanged."""
    match = re.fullmatch(r"(\w+): (\w+=[^ ]*)", title.strip())
    if not match:
        return title
    return f"{match.group(1)}: {setting_words(match.group(2))}"
