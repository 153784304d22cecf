"""A command's words as its tool's arguments, case by case (bot.command_args): bare words
for the one field, lists in each form, each simple type in English and Chinese words,
and a refusal, never a guess, when the words could fill the fields two ways."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import BaseModel, Field

from groupmate.bot.command_args import CommandWords
from groupmate.bot.command_fields import CommandWordsError
from groupmate.function_calls.language import Lang
from groupmate.function_calls.schema import model_parameters_schema

# A Saturday, 10:00 in Berlin: "tomorrow at 9" is Sunday's.
NOW = datetime(2026, 11, 28, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))


class Vote(BaseModel):
    option: int = Field(ge=1, le=3)


class Poll(BaseModel):
    question: str = Field(min_length=1, max_length=200)
    options: list[str] = Field(min_length=2, max_length=10)


class Pick(BaseModel):
    numbers: list[int]


class Size(StrEnum):
    small = "small"
    large = "large"


class Order(BaseModel):
    size: Size
    sugar: bool = False
    shots: float = Field(1, gt=0, le=4)


class Meet(BaseModel):
    when: datetime


class Standup(BaseModel):
    when: datetime
    topic: str


class Day(BaseModel):
    day: date


class Alarm(BaseModel):
    at: time


class Wait(BaseModel):
    wait: timedelta


class Pair(BaseModel):
    left: list[str]
    right: list[str]


class Two(BaseModel):
    a: int = 1
    b: int = 2


def words(model: type[BaseModel], name: str = "cmd") -> CommandWords:
    return CommandWords(name, model_parameters_schema(model))


def read(model: type[BaseModel], text: str, lang: Lang = "en") -> dict[str, Any]:
    arguments = words(model).arguments(text, now=NOW, lang=lang)
    model.model_validate(arguments)  # what the words give passes the model too
    return arguments


def refused(model: type[BaseModel], text: str, lang: Lang = "en") -> str:
    with pytest.raises(CommandWordsError) as caught:
        words(model).arguments(text, now=NOW, lang=lang)
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "option"),
    [("2", 2), ("option=2", 2), ("two", 2), ("二", 2), ("两", 2), ("\uff12", 2), ("+3", 3)],
)
def test_one_required_field_takes_the_bare_words(text: str, option: int) -> None:
    assert read(Vote, text) == {"option": option}


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("pizza, sushi", ["pizza", "sushi"]),
        ("pizza | sushi", ["pizza", "sushi"]),
        ("pizza，sushi，拉面", ["pizza", "sushi", "拉面"]),
        ("pizza、sushi", ["pizza", "sushi"]),
        ("pizza sushi", ["pizza", "sushi"]),
        ("green tea, black coffee", ["green tea", "black coffee"]),
        ('"fish, chips" | pizza', ["fish, chips", "pizza"]),
        ('"fish, chips", pizza', ["fish, chips", "pizza"]),
        ("“鱼，薯条”，披萨", ["鱼，薯条", "披萨"]),
        ("it's, fine", ["it's", "fine"]),  # an apostrophe is no quote
        ("a, b,", ["a", "b"]),
    ],
)
def test_a_list_field_takes_each_form(text: str, options: list[str]) -> None:
    assert read(Poll, f'"Lunch?" {text}') == {"question": "Lunch?", "options": options}


def test_a_list_field_by_its_key() -> None:
    expected = {"question": "Lunch?", "options": ["pizza", "sushi"]}
    assert read(Poll, 'question="Lunch?" options=pizza,sushi') == expected
    assert read(Poll, 'question="Lunch?" options=pizza options=sushi') == expected
    assert read(Poll, 'question="Lunch?" options=["pizza","sushi"]') == expected
    assert read(Poll, '"Lunch?" options=pizza|sushi') == expected


def test_an_int_list() -> None:
    assert read(Pick, "1 3") == {"numbers": [1, 3]}
    assert read(Pick, "1, 3, 5") == {"numbers": [1, 3, 5]}
    assert read(Pick, "numbers=1 numbers=3") == {"numbers": [1, 3]}
    assert refused(Pick, "1 x") == "“x” doesn't fit numbers: it takes a whole number."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("large", {"size": "large"}),
        ("LARGE", {"size": "large"}),
        ("small sugar=yes", {"size": "small", "sugar": True}),
        ("small sugar=是", {"size": "small", "sugar": True}),
        ("small sugar=否", {"size": "small", "sugar": False}),
        ("small sugar=off", {"size": "small", "sugar": False}),
        ("size=large shots=2.5", {"size": "large", "shots": 2.5}),
    ],
)
def test_enums_bools_and_numbers(text: str, expected: dict[str, Any]) -> None:
    assert read(Order, text) == expected


@pytest.mark.parametrize(
    ("text", "when"),
    [
        ("tomorrow at 9", "2026-11-29T09:00:00+01:00"),
        ("明天上午9点", "2026-11-29T09:00:00+01:00"),
        ("in 2 hours", "2026-11-28T12:00:00+01:00"),
        ("2026-12-24T18:00:00+01:00", "2026-12-24T18:00:00+01:00"),
    ],
)
def test_a_datetime_in_the_grammars_words(text: str, when: str) -> None:
    assert read(Meet, text) == {"when": when}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tomorrow at 9 standup", ("2026-11-29T09:00:00+01:00", "standup")),
        ("明天上午9点 开会", ("2026-11-29T09:00:00+01:00", "开会")),
        ('"tomorrow at 9" standup', ("2026-11-29T09:00:00+01:00", "standup")),
        ("in 10 minutes to call mom", ("2026-11-28T10:10:00+01:00", "call mom")),
    ],
)
def test_a_time_before_another_field_ends_where_the_grammar_says(
    text: str, expected: tuple[str, str]
) -> None:
    when, topic = expected
    assert read(Standup, text) == {"when": when, "topic": topic}


def test_a_time_that_does_not_lead_is_refused() -> None:
    # The grammar reads a time at the end too; that one is no leading field's.
    assert refused(Standup, "standup tomorrow at 9").startswith("“standup tomorrow at 9” doesn't")
    assert refused(Standup, "tomorrow at 9") == "Usage: /cmd <when: date and time> <topic>"


def test_dates_times_and_durations() -> None:
    assert read(Day, "tomorrow") == {"day": "2026-11-29"}
    assert read(Day, "明天") == {"day": "2026-11-29"}
    assert read(Day, "2026-12-24") == {"day": "2026-12-24"}
    assert read(Alarm, "6:30pm") == {"at": "18:30"}
    assert read(Alarm, "18:30") == {"at": "18:30"}
    assert read(Wait, "90 minutes") == {"wait": "PT90M"}
    assert read(Wait, "半小时") == {"wait": "PT30M"}
    assert refused(Day, "tomorrow at 9").startswith("“tomorrow at 9” doesn't fit day")
    assert refused(Meet, "every day at 9").startswith("“every day at 9” doesn't fit when")


@pytest.mark.parametrize(
    ("model", "text", "lang", "said"),
    [
        (Vote, "5", "en", "“5” doesn't fit option: it takes a whole number from 1 to 3."),
        # "a" is one in "in a minute", not on its own.
        (Vote, "a", "en", "“a” doesn't fit option: it takes a whole number from 1 to 3."),
        (Vote, "5", "zh", "“5”不适合 option：需要1 到 3 的整数。"),
        (Vote, "2.5", "en", "“2.5” doesn't fit option: it takes a whole number from 1 to 3."),
        (Vote, "", "en", "Usage: /cmd <option: 1–3>"),
        (Vote, "", "zh", "用法：/cmd <option：1–3>"),
        (Order, "medium", "en", "“medium” doesn't fit size: it takes one of small, large."),
        (Order, "medium", "zh", "“medium”不适合 size：需要其中之一：small、large。"),
        (Order, "small sugar=maybe", "en", "“maybe” doesn't fit sugar: it takes yes or no."),
        (Order, "small shots=0", "en", "“0” doesn't fit shots: it takes a number >0 ≤4."),
        (Poll, '"Q" pizza', "en", "options takes 2 to 10 items, separated by commas: a, b"),
        (Poll, '"Q" pizza', "zh", "options 需要 2 到 10 项，用逗号分开：a, b"),
        (
            Meet,
            "banana",
            "zh",
            "“banana”不适合 when：需要日期和时间，例如 明天上午9点 或 2026-12-24 18:00。",
        ),
    ],
)
def test_a_misfit_names_the_field_and_what_it_takes(
    model: type[BaseModel], text: str, lang: Lang, said: str
) -> None:
    assert refused(model, text, lang) == said


@pytest.mark.parametrize(
    ("model", "text", "usage"),
    [
        # The question's words have no end without quotes: not guessed.
        (Poll, "Where to eat? pizza, sushi", 'Usage: /cmd "<question>" <options: a, b, …>'),
        # Two lists: which words are whose?
        (Pair, "a b c", "Usage: /cmd <left=a, b, …> <right=a, b, …>"),
        # Two optional numbers: which one is 5?
        (Two, "5", "Usage: /cmd [a=whole number] [b=whole number]"),
        # A value given twice.
        (Vote, "option=1 option=2", "Usage: /cmd <option: 1–3>"),
    ],
)
def test_words_that_fit_two_ways_are_refused_with_the_usage(
    model: type[BaseModel], text: str, usage: str
) -> None:
    assert refused(model, text) == usage


def test_two_lists_by_their_keys() -> None:
    assert read(Pair, "left=a,b right=c") == {"left": ["a", "b"], "right": ["c"]}


def test_usage_lines_come_from_the_schema() -> None:
    assert words(Vote, "vote").usage() == "/vote <option: 1–3>"
    assert words(Poll, "poll").usage() == '/poll "<question>" <options: a, b, …>'
    assert words(Pick, "pick").usage() == "/pick <numbers: 1, 2, …>"
    assert words(Order, "order").usage() == (
        "/order <size: small|large> [sugar=yes|no] [shots=>0 ≤4]"
    )
    assert words(Order, "order").usage("zh") == (
        "/order <size：small|large> [sugar=是|否] [shots=>0 ≤4]"
    )
    assert words(Meet, "meet").usage("zh") == "/meet <when：日期和时间>"
