"""Rules presets and KataGo's JSON form (what kata-get-rules / kata-set-rules exchange)."""

import json

import pytest

from dosaku.engine.rules.rulesets import PRESETS, rules_by_name, rules_from_kata_json


@pytest.mark.parametrize("name, friendly", [("chinese", True), ("aga", True),
                                            ("new-zealand", True), ("tromp-taylor", False),
                                            ("japanese", False), ("korean", False)])
def test_friendly_pass_per_preset_as_katago(name, friendly):
    assert json.loads(rules_by_name(name).to_kata_json())["friendlyPassOk"] is friendly


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_json_round_trip_keeps_every_setting(name):
    rules = PRESETS[name]
    back = rules_from_kata_json(rules.to_kata_json(), PRESETS["tromp-taylor"])
    assert (back.ko, back.scoring, back.suicide, back.tax, back.white_handicap_bonus,
            back.friendly_pass_ok) == (rules.ko, rules.scoring, rules.suicide, rules.tax,
                                       rules.white_handicap_bonus, rules.friendly_pass_ok)


def test_partial_json_keeps_the_base_but_friendly_pass_defaults_off():
    rules = rules_from_kata_json('{"ko": "POSITIONAL"}', PRESETS["chinese"])
    assert (rules.ko, rules.scoring, rules.white_handicap_bonus) == ("positional", "area", "N")
    assert rules.friendly_pass_ok is False
    with pytest.raises(ValueError):
        rules_from_kata_json('{"ko": "SOMETIMES"}', PRESETS["chinese"])
